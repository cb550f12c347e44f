// ESLint rule `slipway/service-auth-only`: an application's `service_auth` schema (its own
// database: the sign-in service's users, sessions, organizations…) is queried only by
// libs/sign-in-core's stores (issue 35). Elsewhere it reports SQL text that names a `service_auth`
// table after FROM / INTO / UPDATE / JOIN / TABLE (`service_auth.sessions`, `"service_auth"."users"`)
// or puts the schema on the search path. Prose that merely names the schema is left alone.
// Where it applies is eslint.config.js's concern: tests, libs/sign-in-core itself and
// libs/sign-in-sdk (the package an application's own server installs: pg and jose only, it reads
// its own database's session) are left out there.

const SQL = /\b(?:FROM|INTO|UPDATE|JOIN|TABLE)\s+(?:ONLY\s+)?"?service_auth"?\s*\.\s*"?(\w+|\*)/i;
const SEARCH_PATH = /\bsearch_path\s*(?:=|TO)\s*[^;]*\bservice_auth\b/i;

export default {
  meta: {
    type: 'problem',
    docs: { description: "service_auth queries live in libs/sign-in-core's stores only" },
    schema: [],
    messages: {
      sql: 'SQL on the sign-in table "service_auth.{{table}}". An application\'s service_auth is queried only in libs/sign-in-core (src/store/); call its store instead.',
      searchPath: "service_auth on the search path. An application's service_auth is queried only in libs/sign-in-core (src/store/); call its store instead.",
    },
  },
  create(context) {
    const checkText = (node, text) => {
      const match = SQL.exec(text);
      if (match) return context.report({ node, messageId: 'sql', data: { table: match[1] } });
      if (SEARCH_PATH.test(text)) context.report({ node, messageId: 'searchPath' });
    };
    return {
      Literal(node) {
        if (typeof node.value === 'string') checkText(node, node.value);
      },
      TemplateLiteral(node) {
        checkText(node, node.quasis.map((q) => q.value.cooked ?? q.value.raw).join(' ${} '));
      },
    };
  },
};
