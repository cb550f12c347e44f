import { z } from '@slipway/config';
import { optionalUrl } from '../../common/index.js';

export const requestResetBody = z.object({ email: z.string().min(1).max(320), redirectTo: optionalUrl });
export const resetBody = z.object({ newPassword: z.string().max(1024), token: z.string().min(1).max(200).optional() });
export const changeBody = z.object({ currentPassword: z.string().max(1024), newPassword: z.string().max(1024), revokeOtherSessions: z.boolean().optional() });
