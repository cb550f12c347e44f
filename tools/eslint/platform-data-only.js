// ESLint rule `slipway/platform-data-only`: the platform database is queried only by
// libs/platform-data's repositories (issue 21). Elsewhere it reports
// - SQL text naming a platform table after FROM / INTO / UPDATE / JOIN / TABLE / DELETE FROM,
// - a Prisma model call on a platform model (`x.application.findMany(...)`),
// - Prisma's raw-query and transaction entry points (`$queryRaw`, `$executeRaw`, `$transaction`...),
// - importing the Prisma client factory or type from `@slipway/platform-schema`.
// Where it applies (the files it is turned on for) is eslint.config.mjs's concern; tests,
// migrations, libs/platform-schema (the migration runner), libs/testing and a sign-in tenant's own
// `service_auth` repositories are left out there.

export const PLATFORM_TABLES = [
  'owners',
  'owner_sessions',
  'personal_access_tokens',
  'applications',
  'api_keys',
  'domains',
  'secrets',
  'deployments',
  'releases',
  'application_databases',
  'sign_in_services',
  'trusted_origins',
  'emails',
];
export const PLATFORM_MODELS = [
  'owner',
  'ownerSession',
  'personalAccessToken',
  'application',
  'apiKey',
  'domain',
  'secret',
  'deployment',
  'release',
  'applicationDatabase',
  'signInService',
  'trustedOrigin',
  'email',
];
const MODEL_METHODS = new Set([
  'findUnique',
  'findUniqueOrThrow',
  'findFirst',
  'findFirstOrThrow',
  'findMany',
  'create',
  'createMany',
  'createManyAndReturn',
  'update',
  'updateMany',
  'updateManyAndReturn',
  'upsert',
  'delete',
  'deleteMany',
  'count',
  'aggregate',
  'groupBy',
]);
const RAW = new Set(['$queryRaw', '$queryRawUnsafe', '$executeRaw', '$executeRawUnsafe', '$transaction']);
const SQL = new RegExp(`\\b(?:FROM|INTO|UPDATE|JOIN|TABLE)\\s+(?:ONLY\\s+)?(?:public\\.)?"?(${PLATFORM_TABLES.join('|')})"?(?![\\w-])`);
const MESSAGE = 'The platform database is queried only in libs/platform-data (a repository method); call the repository instead.';

const name = (node) => (node?.type === 'Identifier' ? node.name : node?.type === 'Literal' ? String(node.value) : undefined);

export default {
  meta: {
    type: 'problem',
    docs: { description: 'Platform-database queries live in libs/platform-data only' },
    schema: [],
    messages: {
      sql: `SQL on the platform table "{{table}}". ${MESSAGE}`,
      model: `Prisma call on the platform model "{{model}}". ${MESSAGE}`,
      raw: `{{what}} on the platform database. ${MESSAGE}`,
      client: `The Prisma client of the platform database ({{what}}). ${MESSAGE}`,
    },
  },
  create(context) {
    const checkText = (node, text) => {
      const match = SQL.exec(text);
      if (match) context.report({ node, messageId: 'sql', data: { table: match[1] } });
    };
    return {
      Literal(node) {
        if (typeof node.value === 'string') checkText(node, node.value);
      },
      TemplateLiteral(node) {
        checkText(node, node.quasis.map((q) => q.value.cooked ?? q.value.raw).join(' ${} '));
      },
      MemberExpression(node) {
        const property = name(node.property);
        if (property && RAW.has(property)) return context.report({ node, messageId: 'raw', data: { what: property } });
        // x.<model>.<method>(...)
        if (property && MODEL_METHODS.has(property) && node.object.type === 'MemberExpression') {
          const model = name(node.object.property);
          if (model && PLATFORM_MODELS.includes(model)) context.report({ node, messageId: 'model', data: { model } });
        }
      },
      ImportDeclaration(node) {
        if (node.source.value !== '@slipway/platform-schema') return;
        for (const specifier of node.specifiers) {
          const imported = specifier.type === 'ImportSpecifier' ? name(specifier.imported) : undefined;
          if (imported === 'createPrismaClient' || imported === 'PrismaClient')
            context.report({ node: specifier, messageId: 'client', data: { what: imported } });
        }
      },
    };
  },
};
