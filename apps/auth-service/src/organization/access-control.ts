/**
 * Better Auth's default access control for organizations (`better-auth/plugins/organization/access`,
 * 1.7.25): the statements, the roles owner/admin/member, and `role.authorize` with its AND
 * connector. Teams' and dynamic access control's statements are listed (Better Auth's defaults
 * grant them) though their routes are not served here.
 */
export const DEFAULT_STATEMENTS = {
  organization: ['update', 'delete'],
  member: ['create', 'update', 'delete'],
  invitation: ['create', 'cancel'],
  team: ['create', 'update', 'delete'],
  ac: ['create', 'read', 'update', 'delete'],
} as const;

type Statements = Record<string, readonly string[]>;

const ROLES: Record<string, Statements> = {
  owner: {
    organization: ['update', 'delete'],
    member: ['create', 'update', 'delete'],
    invitation: ['create', 'cancel'],
    team: ['create', 'update', 'delete'],
    ac: ['create', 'read', 'update', 'delete'],
  },
  admin: {
    organization: ['update'],
    invitation: ['create', 'cancel'],
    member: ['create', 'update', 'delete'],
    team: ['create', 'update', 'delete'],
    ac: ['create', 'read', 'update', 'delete'],
  },
  member: { organization: [], member: [], invitation: [], team: [], ac: ['read'] },
};

/** The role given to an organization's creator; only it may hand itself out (Better Auth's `creatorRole`). */
export const CREATOR_ROLE = 'owner';

/** The roles a member or invitation may hold (no custom roles here). */
export const KNOWN_ROLES = new Set(Object.keys(ROLES));

export type Permissions = Record<string, string[]>;

/** Roles are stored comma-separated and may come as a string or a list (Better Auth's parseRoleList). */
export function parseRoleList(roles: string | string[]): string[] {
  return (Array.isArray(roles) ? roles : [roles])
    .flatMap((role) => role.split(','))
    .map((role) => role.trim())
    .filter(Boolean);
}

/** The stored form: trimmed names joined by commas (Better Auth's parseRoles). */
export function parseRoles(roles: string | string[]): string {
  return parseRoleList(roles).join(',');
}

export function hasRole(roles: string, role: string): boolean {
  return parseRoleList(roles).includes(role);
}

/** `role.authorize(request)` with the AND connector: every requested resource known and every action granted. */
function authorize(statements: Statements, request: Permissions): boolean {
  let authorized = false;
  for (const [resource, actions] of Object.entries(request)) {
    const allowed = statements[resource];
    if (!allowed || !Array.isArray(actions) || actions.length === 0) return false;
    if (!actions.every((action) => typeof action === 'string' && allowed.includes(action))) return false;
    authorized = true;
  }
  return authorized;
}

/**
 * Better Auth's hasPermissionFn: true when any of the member's roles grants every requested
 * permission; `allowCreatorAllPermissions` (update-member-role) lets the creator role do anything.
 */
export function hasPermission(memberRoles: string, permissions: Permissions | undefined, allowCreatorAllPermissions = false): boolean {
  if (!permissions) return false;
  const roles = parseRoleList(memberRoles);
  if (allowCreatorAllPermissions && roles.includes(CREATOR_ROLE)) return true;
  return roles.some((role) => {
    const statements = Object.hasOwn(ROLES, role) ? ROLES[role] : undefined;
    return statements !== undefined && authorize(statements, permissions);
  });
}
