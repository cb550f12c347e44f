import { Inject, Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import { HTTP_CODE_METADATA, METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants.js';
import { DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';
import { ERROR_CODES, type ErrorCode } from '@slipway/contract';
import { z } from 'zod';
import { GATEWAY_CONFIG, type GatewayConfig } from '../config.js';
import { ErrorBody } from '../contract/index.js';
import { OWNERS_API_ACCESS, type OwnersApiAccess } from '../owners/index.js';
import { OWNERS_API_DOC, type OwnersApiDoc } from './owners-api-doc.js';

export const OWNERS_API_PREFIX = '/dashboard/api';
const METHODS = ['get', 'post', 'put', 'delete', 'patch', 'all', 'options', 'head'] as const;
const jsonSchema = (schema: z.ZodType) => z.toJSONSchema(schema, { target: 'draft-2020-12', unrepresentable: 'any', io: 'output' });

/** One route as the document lists it. */
interface Route {
  method: string;
  path: string;
  status: number;
  access: OwnersApiAccess | undefined;
  doc: OwnersApiDoc | undefined;
}

/**
 * `GET /dashboard/api/openapi.json`: the owners' API (everything beyond the contract), built at
 * start-up from the routes Nest registered under /dashboard/api — so a route added anywhere is
 * listed without a second list to keep in step — with who may call each one.
 */
@Injectable()
export class OwnersApiService implements OnApplicationBootstrap {
  private document: Record<string, unknown> = {};

  constructor(
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly reflector: Reflector,
  ) {}

  onApplicationBootstrap(): void {
    this.document = this.build(this.routes());
  }

  openApiDocument(): Record<string, unknown> {
    return this.document;
  }

  private routes(): Route[] {
    const routes: Route[] = [];
    for (const wrapper of this.discovery.getControllers()) {
      const type = wrapper.metatype as (new (...args: unknown[]) => unknown) | undefined;
      if (!type) continue;
      const base = String(Reflect.getMetadata(PATH_METADATA, type) ?? '');
      if (!`/${base}`.startsWith(OWNERS_API_PREFIX)) continue;
      for (const name of this.scanner.getAllMethodNames(type.prototype as object)) {
        const handler = (type.prototype as Record<string, unknown>)[name] as object;
        const sub = Reflect.getMetadata(PATH_METADATA, handler) as string | undefined;
        if (sub === undefined) continue;
        const method = METHODS[Reflect.getMetadata(METHOD_METADATA, handler) as number] ?? 'get';
        const path = `/${[base, sub]
          .map((p) => p.replace(/^\/+|\/+$/g, ''))
          .filter(Boolean)
          .join('/')}`.replace(/:(\w+)/g, '{$1}');
        routes.push({
          method,
          path,
          status: (Reflect.getMetadata(HTTP_CODE_METADATA, handler) as number | undefined) ?? (method === 'post' ? 201 : 200),
          access: this.reflector.getAllAndOverride<OwnersApiAccess>(OWNERS_API_ACCESS, [handler as () => void, type]),
          doc: this.reflector.get<OwnersApiDoc>(OWNERS_API_DOC, handler as () => void),
        });
      }
    }
    return routes.sort((a, b) => a.path.localeCompare(b.path) || a.method.localeCompare(b.method));
  }

  private build(routes: Route[]): Record<string, unknown> {
    const paths: Record<string, Record<string, unknown>> = {};
    for (const route of routes) {
      paths[route.path] ??= {};
      paths[route.path]![route.method] = this.operation(route);
    }
    return {
      openapi: '3.1.0',
      info: {
        title: "Slipway owners' API",
        version: '1',
        description: [
          'Everything beyond the deployment contract (/api/v1): applications, releases, rollback, domains, secrets, sign-in, credentials. The dashboard and the `slipway` CLI both use it.',
          "Authenticate with the dashboard session cookie (writes need `Origin` = the platform and `X-Slipway-Csrf: 1`), or `Authorization: Bearer` with a personal access token (slw_pat_…, every application of its owner) or a project API key (slw_key_…, its own application only: any other application answers 404; routes not about one application answer 403, except GET /dashboard/api/applications, which lists the key's application).",
          'Errors have the contract\'s shape `{"error","code","documentation"}` and codes (GET /api/v1 lists them).',
        ].join('\n\n'),
      },
      servers: [{ url: this.config.PUBLIC_URL }],
      paths,
      components: {
        securitySchemes: {
          session: {
            type: 'apiKey',
            in: 'cookie',
            name: 'slipway_session',
            description: 'The dashboard session; writes also need Origin and X-Slipway-Csrf: 1.',
          },
          ownerToken: { type: 'http', scheme: 'bearer', description: "The owner's personal access token (slw_pat_…): every application of the owner." },
          projectApiKey: { type: 'http', scheme: 'bearer', description: 'A project API key (slw_key_…): its own application only.' },
        },
        schemas: { Error: jsonSchema(ErrorBody) },
      },
    };
  }

  private operation(route: Route): Record<string, unknown> {
    const access = route.access;
    const onApplication = route.path.includes('{appId}');
    const security = !access
      ? []
      : [
          { session: [] },
          ...(access.bearer ? [{ ownerToken: [] }] : []),
          ...(access.bearer && access.projectKeys === 'own-application' ? [{ projectApiKey: [] }] : []),
        ];
    const errors = new Set<ErrorCode>([
      ...(route.doc?.errors ?? []),
      ...(access ? (['unauthorized', 'forbidden'] as const) : []),
      ...(onApplication ? (['not_found'] as const) : []),
      'internal',
    ]);
    const responses: Record<string, unknown> = {
      [String(route.status)]: {
        description: 'Success',
        content: { 'application/json': route.doc?.response ? { schema: jsonSchema(route.doc.response) } : {} },
      },
    };
    for (const code of errors) {
      const status = String(ERROR_CODES[code].status);
      const existing = responses[status] as { description: string } | undefined;
      responses[status] = {
        description: existing ? `${existing.description}, ${code}` : `Error: ${code}`,
        content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
      };
    }
    const parameters = [...route.path.matchAll(/\{(\w+)\}/g)].map((m) => ({ name: m[1], in: 'path', required: true, schema: { type: 'string' } }));
    return {
      summary: route.doc?.summary ?? `${route.method.toUpperCase()} ${route.path}`,
      security,
      ...(parameters.length ? { parameters } : {}),
      ...(route.doc?.request ? { requestBody: { required: false, content: { 'application/json': { schema: jsonSchema(route.doc.request) } } } } : {}),
      responses,
    };
  }
}
