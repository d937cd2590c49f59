import type { ModelSummary } from './model-summary.js';

/** Why a stored item would break on the new model. */
export type ImpactReason = 'member_removed' | 'member_renamed' | 'type_changed' | 'member_hidden';

/** One stored item that names a member the change breaks (issue 33: `impact`). */
export interface ImpactItem {
  type: 'report' | 'dashboard' | 'notification';
  id: number;
  name: string;
  /** The member as the item names it: `Orders.count`. */
  member: string;
  reason: ImpactReason;
  /** For `member_renamed`: the member's new path. */
  renamedTo?: string;
  /** The embed tenants (their names) that see the item through embed access grants; sorted. */
  tenants: string[];
}

/**
 * What stored content of a deployment a model change would break. The data model declares it;
 * the content-impact module, which reads reports, dashboards, notifications and embed grants
 * through their modules, provides it (the data model is below those modules).
 */
export abstract class ContentImpact {
  /**
   * Items that work on `base` and would break on `head`: each names a member of `base` that `head`
   * no longer has (`renames` maps an old path to its new one where the diff could tell), or whose
   * type or visibility changed. One entry per item and member, in a stable order (type, id,
   * member). Content that is already broken on `base` is not listed.
   */
  abstract between(
    accountId: number,
    deploymentId: number,
    base: ModelSummary,
    head: ModelSummary,
    renames: ReadonlyMap<string, string>,
  ): Promise<ImpactItem[]>;
}
