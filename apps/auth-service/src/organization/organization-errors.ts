import { AuthError } from '../common/index.js';

/** Better Auth's ORGANIZATION_ERROR_CODES (1.7.25) used by the routes served here: code → message. */
const MESSAGES = {
  YOU_ARE_NOT_ALLOWED_TO_CREATE_A_NEW_ORGANIZATION: 'You are not allowed to create a new organization',
  ORGANIZATION_ALREADY_EXISTS: 'Organization already exists',
  ORGANIZATION_SLUG_ALREADY_TAKEN: 'Organization slug already taken',
  ORGANIZATION_NOT_FOUND: 'Organization not found',
  USER_IS_NOT_A_MEMBER_OF_THE_ORGANIZATION: 'User is not a member of the organization',
  YOU_ARE_NOT_ALLOWED_TO_UPDATE_THIS_ORGANIZATION: 'You are not allowed to update this organization',
  YOU_ARE_NOT_ALLOWED_TO_DELETE_THIS_ORGANIZATION: 'You are not allowed to delete this organization',
  NO_ACTIVE_ORGANIZATION: 'No active organization',
  USER_IS_ALREADY_A_MEMBER_OF_THIS_ORGANIZATION: 'User is already a member of this organization',
  MEMBER_NOT_FOUND: 'Member not found',
  ROLE_NOT_FOUND: 'Role not found',
  YOU_CANNOT_LEAVE_THE_ORGANIZATION_AS_THE_ONLY_OWNER: 'You cannot leave the organization as the only owner',
  YOU_CANNOT_LEAVE_THE_ORGANIZATION_WITHOUT_AN_OWNER: 'You cannot leave the organization without an owner',
  YOU_ARE_NOT_ALLOWED_TO_DELETE_THIS_MEMBER: 'You are not allowed to delete this member',
  YOU_ARE_NOT_ALLOWED_TO_INVITE_USERS_TO_THIS_ORGANIZATION: 'You are not allowed to invite users to this organization',
  USER_IS_ALREADY_INVITED_TO_THIS_ORGANIZATION: 'User is already invited to this organization',
  INVITATION_NOT_FOUND: 'Invitation not found',
  YOU_ARE_NOT_THE_RECIPIENT_OF_THE_INVITATION: 'You are not the recipient of the invitation',
  EMAIL_VERIFICATION_REQUIRED_FOR_INVITATION: 'Email verification required to view or list invitations for the session email',
  YOU_ARE_NOT_ALLOWED_TO_CANCEL_THIS_INVITATION: 'You are not allowed to cancel this invitation',
  YOU_ARE_NOT_ALLOWED_TO_LIST_INVITATIONS: 'You are not allowed to list invitations for this organization',
  INVITER_IS_NO_LONGER_A_MEMBER_OF_THE_ORGANIZATION: 'Inviter is no longer a member of the organization',
  YOU_ARE_NOT_ALLOWED_TO_INVITE_USER_WITH_THIS_ROLE: 'You are not allowed to invite a user with this role',
  YOU_ARE_NOT_ALLOWED_TO_UPDATE_THIS_MEMBER: 'You are not allowed to update this member',
  ORGANIZATION_MEMBERSHIP_LIMIT_REACHED: 'Organization membership limit reached',
  INVITATION_LIMIT_REACHED: 'Invitation limit reached',
  YOU_ARE_NOT_A_MEMBER_OF_THIS_ORGANIZATION: 'You are not a member of this organization',
} as const;

export type OrganizationErrorCode = keyof typeof MESSAGES;

/** `APIError.from(status, ORGANIZATION_ERROR_CODES[code])`: status + `{code, message}`. */
export function orgError(status: 400 | 401 | 403, code: OrganizationErrorCode): AuthError {
  return new AuthError(status, code, MESSAGES[code]);
}

/** Unknown role names: Better Auth's `ROLE_NOT_FOUND: name, …`. */
export function roleNotFound(names: string[]): AuthError {
  return new AuthError(400, 'ROLE_NOT_FOUND', `ROLE_NOT_FOUND: ${names.join(', ')}`);
}

/** `APIError.fromStatus(status, {message})`: Better Auth answers these with `{message}` alone, no code. */
export function plainError(status: 400 | 401 | 403, message: string): AuthError {
  return new AuthError(status, status === 400 ? 'BAD_REQUEST' : status === 401 ? 'UNAUTHORIZED' : 'FORBIDDEN', message, {}, { message });
}
