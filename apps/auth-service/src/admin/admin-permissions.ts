import { AuthError } from '../common/index.js';

/** Better Auth's admin plugin's default statements: what each resource allows. */
export const ADMIN_STATEMENTS = {
  user: ['create', 'list', 'set-role', 'ban', 'impersonate', 'impersonate-admins', 'delete', 'set-password', 'set-email', 'set-phone', 'get', 'update'],
  session: ['list', 'revoke', 'delete'],
} as const;

type Statements = { [R in keyof typeof ADMIN_STATEMENTS]?: readonly (typeof ADMIN_STATEMENTS)[R][number][] };

/** Its default roles: `admin` may do everything but impersonate other admins; `user` nothing. */
const DEFAULT_ROLES: Record<string, Statements> = {
  admin: {
    user: ['create', 'list', 'set-role', 'ban', 'impersonate', 'delete', 'set-password', 'set-email', 'set-phone', 'get', 'update'],
    session: ['list', 'revoke', 'delete'],
  },
  user: { user: [], session: [] },
};

/** The roles a user may be given (Better Auth's default roles); anything else is refused. */
export const ADMIN_ROLES = Object.keys(DEFAULT_ROLES);

/**
 * Better Auth's `hasPermission`: a user's roles (comma-separated) grant the request when one of
 * them allows every action asked of every resource. Unknown roles, resources or actions grant nothing.
 */
export function hasPermission(role: string | null | undefined, permissions: Record<string, readonly string[]>): boolean {
  const entries = Object.entries(permissions);
  for (const name of (role || 'user').split(',')) {
    const granted = Object.hasOwn(DEFAULT_ROLES, name) ? DEFAULT_ROLES[name]! : null;
    if (!granted) continue;
    const allows = entries.every(([resource, actions]) => {
      const allowed = Object.hasOwn(granted, resource) ? (granted[resource as keyof Statements] as readonly string[] | undefined) : undefined;
      return allowed !== undefined && actions.every((a) => allowed.includes(a));
    });
    if (allows) return true;
  }
  return false;
}

/** True when any of the user's roles is an admin role (Better Auth's `adminRoles`, default `['admin']`). */
export function isAdminRole(role: string | null | undefined): boolean {
  return (role || 'user').split(',').some((r) => r.trim() === 'admin');
}

/** Better Auth's admin error codes and messages (`ADMIN_ERROR_CODES`) used here. */
const MESSAGES = {
  USER_ALREADY_EXISTS_USE_ANOTHER_EMAIL: 'User already exists. Use another email.',
  YOU_CANNOT_BAN_YOURSELF: 'You cannot ban yourself',
  YOU_ARE_NOT_ALLOWED_TO_CHANGE_USERS_ROLE: 'You are not allowed to change users role',
  YOU_ARE_NOT_ALLOWED_TO_CREATE_USERS: 'You are not allowed to create users',
  YOU_ARE_NOT_ALLOWED_TO_LIST_USERS: 'You are not allowed to list users',
  YOU_ARE_NOT_ALLOWED_TO_LIST_USERS_SESSIONS: 'You are not allowed to list users sessions',
  YOU_ARE_NOT_ALLOWED_TO_BAN_USERS: 'You are not allowed to ban users',
  YOU_ARE_NOT_ALLOWED_TO_IMPERSONATE_USERS: 'You are not allowed to impersonate users',
  YOU_ARE_NOT_ALLOWED_TO_REVOKE_USERS_SESSIONS: 'You are not allowed to revoke users sessions',
  YOU_ARE_NOT_ALLOWED_TO_DELETE_USERS: 'You are not allowed to delete users',
  YOU_ARE_NOT_ALLOWED_TO_SET_USERS_PASSWORD: 'You are not allowed to set users password',
  YOU_ARE_NOT_ALLOWED_TO_GET_USER: 'You are not allowed to get user',
  NO_DATA_TO_UPDATE: 'No data to update',
  YOU_ARE_NOT_ALLOWED_TO_UPDATE_USERS: 'You are not allowed to update users',
  YOU_CANNOT_REMOVE_YOURSELF: 'You cannot remove yourself',
  YOU_ARE_NOT_ALLOWED_TO_SET_NON_EXISTENT_VALUE: 'You are not allowed to set a non-existent role value',
  YOU_CANNOT_IMPERSONATE_ADMINS: 'You cannot impersonate admins',
  INVALID_ROLE_TYPE: 'Invalid role type',
  YOU_ARE_NOT_ALLOWED_TO_SET_USERS_EMAIL: 'You are not allowed to update users email',
  PASSWORD_CANNOT_BE_UPDATED_VIA_UPDATE_USER: 'Password cannot be updated through update-user. Use the set-user-password endpoint instead',
  USER_ID_CANNOT_BE_UPDATED: 'User id cannot be updated',
} as const;

export type AdminErrorCode = keyof typeof MESSAGES;

export function adminError(status: 400 | 403 | 404, code: AdminErrorCode): AuthError {
  return new AuthError(status, code, MESSAGES[code]);
}

export const userNotFound = () => new AuthError(404, 'USER_NOT_FOUND', 'User not found');

/** 403 with `code` unless the user's role allows `permissions`. */
export function requirePermission(role: string, permissions: Record<string, readonly string[]>, code: AdminErrorCode): void {
  if (!hasPermission(role, permissions)) throw adminError(403, code);
}
