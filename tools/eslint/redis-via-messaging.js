// ESLint rule `slipway/redis-via-messaging`: Redis connections are made only by
// libs/messaging's `redisConnection(url, role)` (issue 35), so every process connects the same
// way for the same job. Elsewhere it reports
// - `new Redis(...)` / `new IORedis(...)` (any constructor imported from `ioredis`),
// - importing a value (not a type) of `ioredis`'s constructors: `Redis`, `Cluster`, the default.
// Where it applies is eslint.config.js's concern; tests, libs/messaging and libs/testing are left out there.

const MESSAGE = 'Redis connections come from @slipway/messaging: redisConnection(url, role, overrides?).';
const CONSTRUCTORS = new Set(['Redis', 'Cluster', 'default']);

export default {
  meta: {
    type: 'problem',
    docs: { description: 'Redis connections are made by libs/messaging only' },
    schema: [],
    messages: { construct: `new {{what}}(...). ${MESSAGE}`, import: `Importing ioredis's {{what}} constructor. ${MESSAGE}` },
  },
  create(context) {
    const fromIoredis = new Set();
    return {
      ImportDeclaration(node) {
        if (node.source.value !== 'ioredis') return;
        for (const specifier of node.specifiers) {
          if (node.importKind === 'type' || specifier.importKind === 'type') continue;
          const imported =
            specifier.type === 'ImportDefaultSpecifier'
              ? 'default'
              : specifier.type === 'ImportNamespaceSpecifier'
                ? 'default'
                : (specifier.imported.name ?? specifier.imported.value);
          if (!CONSTRUCTORS.has(imported)) continue;
          fromIoredis.add(specifier.local.name);
          context.report({ node: specifier, messageId: 'import', data: { what: imported === 'default' ? 'default' : imported } });
        }
      },
      NewExpression(node) {
        const callee = node.callee;
        // new Redis(...), new IORedis(...), and new ioredis.Redis(...) on a namespace import.
        const what =
          callee.type === 'Identifier'
            ? callee.name
            : callee.type === 'MemberExpression' && callee.property.type === 'Identifier'
              ? callee.property.name
              : undefined;
        if (!what) return;
        const base = callee.type === 'MemberExpression' && callee.object.type === 'Identifier' ? callee.object.name : what;
        if (what === 'Redis' || fromIoredis.has(base)) context.report({ node, messageId: 'construct', data: { what } });
      },
    };
  },
};
