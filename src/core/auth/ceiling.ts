import ipaddr from 'ipaddr.js';
import type { RequestContext } from '../context.ts';
import { Errors } from '../errors.ts';
import { parseNetworks, type Network } from '../networks.ts';
import { PERMISSIONS, type Role } from '../permissions.ts';

/**
 * The ceiling of what an API key hands on: a key creates keys and invites members only within its own
 * scopes and address rule (its role is checked by the callers, as for users). A signed-in user is not
 * narrowed, so a context without `narrowing` passes.
 */

/** The permissions a role holds: what an empty scope list means. */
function rolePermissions(role: Role): string[] {
  return Object.entries(PERMISSIONS).filter(([, roles]) => roles.includes(role)).map(([permission]) => permission);
}

/** Whether `inner` lies wholly inside `outer` (same family, at least as long a prefix, same leading bits). */
function networkWithin([address, prefix]: Network, [outerAddress, outerPrefix]: Network): boolean {
  if (prefix < outerPrefix) return false;
  return address instanceof ipaddr.IPv4
    ? outerAddress instanceof ipaddr.IPv4 && address.match(outerAddress, outerPrefix)
    : outerAddress instanceof ipaddr.IPv6 && address.match(outerAddress, outerPrefix);
}

/**
 * A new key's `scopes` and `allowed_ips` are within the creating key's: a key narrowed by scopes may
 * only create keys that list scopes, each one it lists itself (an empty list would mean the whole role,
 * today's permissions and any added later); a key with an address rule only keys whose every network
 * lies inside one of its own. 403 `scope_missing` / `allowed_ips_too_wide` otherwise.
 */
export function assertKeyWithinCaller(ctx: RequestContext, grant: { scopes: readonly string[]; allowedIps: readonly string[] }): void {
  const narrowing = ctx.narrowing;
  if (!narrowing) return;
  if (narrowing.scopes.length) {
    if (grant.scopes.length === 0) {
      throw Errors.scopeNotGrantable('This API key is narrowed by scopes: a key it creates must list its scopes, each one among this key\'s');
    }
    const wider = grant.scopes.filter((scope) => !narrowing.scopes.includes(scope));
    if (wider.length) throw Errors.scopeNotGrantable(`This API key's scopes do not include ${wider.join(', ')}: it cannot grant them`);
  }
  if (narrowing.allowedIps.length) {
    if (grant.allowedIps.length === 0) {
      throw Errors.allowedIpsTooWide('This API key has allowed_ips: a key it creates must list allowed_ips within them');
    }
    const own = parseNetworks(narrowing.allowedIps.join(','));
    const outside = grant.allowedIps.filter((entry) => !own.some((network) => networkWithin(parseNetworks(entry)[0]!, network)));
    if (outside.length) throw Errors.allowedIpsTooWide(`${outside.join(', ')} ${outside.length > 1 ? 'are' : 'is'} not within this API key's allowed_ips`);
  }
}

/**
 * An invited member will hold every permission of the invited role, from any address. So a key with an
 * address rule invites no one, and a key narrowed by scopes only to a role whose every permission it
 * lists (the role itself is at most the key's, checked by the caller).
 */
export function assertInvitationWithinCaller(ctx: RequestContext, role: Role): void {
  const narrowing = ctx.narrowing;
  if (!narrowing) return;
  if (narrowing.allowedIps.length) {
    throw Errors.allowedIpsTooWide('This API key has allowed_ips, and a member signs in from any address: invite with an unrestricted key or as a signed-in user');
  }
  if (narrowing.scopes.length) {
    const wider = rolePermissions(role).filter((permission) => !narrowing.scopes.includes(permission));
    if (wider.length) {
      throw Errors.scopeNotGrantable(`A ${role} holds ${wider.join(', ')}, which this API key's scopes do not include: it cannot invite one`);
    }
  }
}
