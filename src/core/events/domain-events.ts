/**
 * What happened to an account's resources, told to whoever listens outside the service (signed
 * webhooks, docs/webhooks.md). Modules publish; the webhooks module provides the implementation
 * (dependency inversion: core never imports a module, and every module may publish without
 * depending on the webhooks module, which itself depends on several of them).
 */

/** Every event type the service publishes. Endpoints subscribe to these names, or to `*`. */
export const EVENT_TYPES = [
  'build.finished',
  'build.failed',
  'dbt_sync.finished',
  'notification.run_finished',
  'notification.delivery_failed',
  'folder.created',
  'folder.changed',
  'folder.deleted',
  'workbook.created',
  'workbook.changed',
  'workbook.deleted',
  'dashboard.created',
  'dashboard.changed',
  'dashboard.deleted',
  'report.created',
  'report.changed',
  'report.deleted',
  'deployment.changed',
  'scim.user_deprovisioned',
] as const;

export type EventType = (typeof EVENT_TYPES)[number];

export const isEventType = (value: string): value is EventType =>
  (EVENT_TYPES as readonly string[]).includes(value);

/** The resource an event is about: its kind (`folder`, `build`, ...) and id. */
export interface EventResource {
  readonly type: string;
  readonly id: string | number;
}

export interface DomainEvent {
  /** The tenant whose resource it is; only that account's endpoints hear of it. */
  readonly accountId: number;
  readonly type: EventType;
  readonly resource: EventResource;
  /**
   * The resource as the API shows it (the body a GET answers, or for a deletion its id and the
   * fields a receiver needs to find it), JSON-serialisable. Never a secret.
   */
  readonly data: Record<string, unknown>;
}

/**
 * Publishes events. Call `publish` inside the unit of work of the change it tells of
 * (`Database.transaction`): the event is recorded with the change, or not at all when it rolls
 * back, and delivered after the commit. Outside a unit of work it is recorded on its own.
 */
export abstract class DomainEvents {
  abstract publish(event: DomainEvent): Promise<void>;
}
