/** The log budget of the `local` driver: per release a ring of files, per application a rate. */
export interface LogLimits {
  /** One file of a release's ring, bytes. */
  maxBytes: number;
  /** Files per release, the current one included: at most `files × maxBytes` on disk per release. */
  files: number;
  /** Bytes a second kept per application; lines beyond are dropped with a marker. */
  rateBytes: number;
  /** Bytes kept (and read) at once above the rate after a quiet spell. */
  burstBytes: number;
  /** Bytes a second read from an application's pipes at most; beyond, its writes wait. */
  readRateBytes: number;
}

const KIB = 1024;
const MIB = 1024 * KIB;

/**
 * 3 × 8 MiB per release (24 MiB); 256 KiB/s kept per application with a 1 MiB burst (Heroku's
 * drain keeps far less); 1 MiB/s read at most — a few reads of 64 KiB a second, nothing for the
 * runtime, while an app that logs faster waits on its own pipe.
 */
export const DEFAULT_LOG_LIMITS: Readonly<LogLimits> = { maxBytes: 8 * MIB, files: 3, rateBytes: 256 * KIB, burstBytes: MIB, readRateBytes: MIB };
