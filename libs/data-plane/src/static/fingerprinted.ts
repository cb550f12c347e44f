/**
 * Content-hashed names (`name.hash.ext`, `name-hash.ext`), and Nuxt's build assets, named by their
 * hash alone (`_nuxt/Btu1cy1g.js`): cached for a year, immutable. One rule for both data planes
 * (the Node edge's static-site.ts and the nginx config, which takes its source).
 */
export const FINGERPRINTED =
  /[.-][0-9a-zA-Z_-]{6,}\.(js|mjs|css|woff2?|ttf|otf|png|jpe?g|gif|webp|avif|svg|ico|wasm|map)$|\/_nuxt\/[0-9a-zA-Z_-]{8,}\.(js|mjs|css)$/;
