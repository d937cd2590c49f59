import { Injectable } from '@nestjs/common';
import type { Principal } from '../../core/auth/principal.js';
import { AppConfig } from '../../core/config/app-config.js';
import { Database } from '../../core/database/database.js';
import { coreError } from '../../core/errors/api-error.js';
import { notFound } from '../../core/errors/not-found.js';
import { buildPage, fetchLimit, resolvePaging, type Page } from '../../core/http/pagination.js';
import { checkUrl as checkOutboundUrl, OutboundRefused } from '../../core/net/outbound-address.js';
import type {
  CreateWebhookEndpointDto,
  UpdateWebhookEndpointDto,
  WebhookEndpointDto,
  WebhookEndpointsQueryDto,
  WebhookEndpointWithSecretDto,
} from './dto/webhook.dto.js';
import { WebhookDeliveriesRepository } from './webhook-deliveries.repository.js';
import { WebhookMaintenance } from './webhook-maintenance.job.js';
import { WebhookSecrets } from './webhook-secrets.js';
import { newSecret } from './webhook-signature.js';
import { webhooksError } from './webhooks.errors.js';
import { WebhooksRepository, type EndpointRow } from './webhooks.repository.js';

/** How long a rotated-out secret keeps signing beside the new one. */
export const ROTATION_OVERLAP_SECONDS = 24 * 3600;

/** What a disabled endpoint's pending deliveries say. */
export const NOT_SENT_DISABLED = 'Not sent: the endpoint was disabled';

/**
 * An account's webhook endpoints: create (the secret is shown once), list, read, change, delete,
 * rotate the secret. Every address is checked against the outbound rule when it is saved (and
 * again at each send). Tenant admins only (the routes require every action).
 */
@Injectable()
export class WebhooksService {
  constructor(
    private readonly db: Database,
    private readonly endpoints: WebhooksRepository,
    private readonly deliveries: WebhookDeliveriesRepository,
    private readonly secrets: WebhookSecrets,
    private readonly maintenance: WebhookMaintenance,
    private readonly config: AppConfig,
  ) {}

  async list(actor: Principal, query: WebhookEndpointsQueryDto): Promise<Page<WebhookEndpointDto>> {
    const paging = resolvePaging(query, ['number']);
    const after = paging.mode === 'cursor' && paging.after ? (paging.after[0] as number) : null;
    const rows = await this.endpoints.page(actor.accountId, after, fetchLimit(paging));
    return buildPage(rows, paging, (r) => [Number(r.id)], toDto);
  }

  async get(actor: Principal, id: number): Promise<WebhookEndpointDto> {
    const row = await this.endpoints.find(actor.accountId, id);
    if (!row) throw notFound('Webhook', id);
    return toDto(row);
  }

  async create(actor: Principal, dto: CreateWebhookEndpointDto): Promise<WebhookEndpointWithSecretDto> {
    const events = checkEvents(dto.events);
    const url = await this.checkUrl(dto.url);
    const secret = newSecret();
    const max = this.config.webhooks.maxEndpoints;
    const created = await this.db.transaction(async () => {
      await this.endpoints.lockAccount(actor.accountId);
      if ((await this.endpoints.count(actor.accountId)) >= max) {
        throw webhooksError(
          'webhook_limit_reached',
          `The account has ${max} webhook endpoints, the most it may have; delete one first`,
        );
      }
      const id = await this.endpoints.nextId();
      return this.endpoints.insert({
        id,
        accountId: actor.accountId,
        url,
        description: dto.description ?? null,
        events,
        secretSealed: this.secrets.sealed(actor.accountId, id, secret),
        enabled: dto.enabled ?? true,
        createdBy: actor.userId,
      });
    });
    await this.maintenance.ensureScheduled();
    return { ...toDto(created), secret };
  }

  async update(actor: Principal, id: number, dto: UpdateWebhookEndpointDto): Promise<WebhookEndpointDto> {
    const events = dto.events === undefined ? undefined : checkEvents(dto.events);
    const url = dto.url === undefined ? undefined : await this.checkUrl(dto.url);
    const updated = await this.db.transaction(async () => {
      if (!(await this.endpoints.lock(actor.accountId, id))) throw notFound('Webhook', id);
      const row = await this.endpoints.update(actor.accountId, id, {
        url,
        events,
        description: dto.description,
        enabled: dto.enabled,
        disabledReason: `Disabled by ${actor.email}`.slice(0, 500),
      });
      if (dto.enabled === false) await this.deliveries.failPending(id, NOT_SENT_DISABLED);
      return row!;
    });
    return toDto(updated);
  }

  async remove(actor: Principal, id: number): Promise<void> {
    if (!(await this.endpoints.delete(actor.accountId, id))) throw notFound('Webhook', id);
  }

  /**
   * A new secret, answered once. The current one becomes the previous one and signs beside it for
   * 24 hours (a second rotation within them drops the oldest).
   */
  async rotateSecret(actor: Principal, id: number): Promise<WebhookEndpointWithSecretDto> {
    const secret = newSecret();
    const rotated = await this.db.transaction(async () => {
      if (!(await this.endpoints.lock(actor.accountId, id))) throw notFound('Webhook', id);
      const current = await this.endpoints.secrets(actor.accountId, id);
      return this.endpoints.rotate(
        actor.accountId,
        id,
        this.secrets.sealed(actor.accountId, id, secret),
        current!.secretSealed,
        ROTATION_OVERLAP_SECONDS,
      );
    });
    return { ...toDto(rotated!), secret };
  }

  /**
   * An absolute http(s) URL without credentials, whose host the outbound rule takes (core/net). A
   * refusal by that rule reads the same whatever the host was.
   */
  private async checkUrl(raw: string): Promise<string> {
    const refuse = (why: string) => webhooksError('invalid_webhook_url', `url ${why}`);
    // eslint-disable-next-line no-control-regex
    if (/[\s\u0000-\u001f\u007f]/.test(raw)) throw refuse('must not contain spaces or control characters');
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      throw refuse('must be an absolute URL such as https://hooks.example.com/analytics');
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:') {
      throw refuse(`uses ${url.protocol}//; only https:// and http:// are sent to`);
    }
    if (url.username !== '' || url.password !== '') {
      throw refuse('must not hold credentials (check the webhook-signature header instead)');
    }
    try {
      await checkOutboundUrl(raw, { allow: this.config.outboundAllowList });
    } catch (err) {
      if (err instanceof OutboundRefused) throw refuse(err.message);
      throw err;
    }
    return raw;
  }
}

/** `*` stands alone: it already means every type. */
function checkEvents(events: string[]): string[] {
  if (events.includes('*') && events.length > 1) {
    throw coreError('validation_failed', ['events: * already names every event type; send ["*"] alone']);
  }
  return events;
}

function toDto(row: EndpointRow): WebhookEndpointDto {
  return {
    id: row.id,
    url: row.url,
    description: row.description,
    events: row.events,
    enabled: row.enabled,
    disabledReason: row.disabledReason,
    disabledAt: row.disabledAt,
    consecutiveFailures: row.consecutiveFailures,
    createdBy: row.createdBy,
    previousSecretExpiresAt: row.previousSecretExpiresAt,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
}
