import { Injectable } from '@nestjs/common';
import { ObjectRouteRule } from '../../core/auth/access.guard.js';
import { isContentAction, type Action } from '../../core/auth/action.js';
import type { Principal } from '../../core/auth/principal.js';

/**
 * The workspace's routing rule. Folders, workbooks and reports are reached through grants on
 * the folders and workbooks that hold them and through ownership, so a route of a Folder,
 * Workbook or Report action lets through anyone holding some such action (account-wide or on
 * any object) and the service decides on the object itself (404 unreadable, 403 readable but
 * not allowed). The module provides it as an {@link ObjectRouteRule} of the core guard.
 */
@Injectable()
export class ContentRouteRule extends ObjectRouteRule {
  admits(principal: Principal, action: Action): boolean {
    return isContentAction(action) && holdsContentAccess(principal);
  }
}

function holdsContentAccess(principal: Principal): boolean {
  for (const set of [principal.actions, principal.objectActions]) {
    for (const a of set) if (isContentAction(a)) return true;
  }
  return false;
}
