import { Injectable } from '@nestjs/common';
import type { Principal } from '../../core/auth/principal.js';
import { AppConfig } from '../../core/config/app-config.js';
import { Database } from '../../core/database/database.js';
import { ApiError, coreError } from '../../core/errors/api-error.js';
import { buildPage, fetchLimit, resolvePaging, type Page } from '../../core/http/pagination.js';
import { desiredState, EmbedUsersService } from '../embedding/embed-users.service.js';
import { EmbedTenantsService } from '../embedding/embed-tenants.service.js';
import {
  normalizeExternalId,
  normalizeTenantName,
  SYNTHETIC_EMAIL_DOMAIN,
} from '../embedding/embed-identity.js';
import { UserAttributesService } from '../user-attributes/user-attributes.service.js';
import { DirectoryService } from '../users/directory.service.js';
import { isNoEmail } from '../users/no-email.js';
import type {
  AddNotificationRecipientsDto,
  NotificationRecipientDto,
  NotificationRecipientInputDto,
  NotificationRecipientsMutationDto,
  RecipientsQueryDto,
  RemoveNotificationRecipientsDto,
} from './dto/recipient.dto.js';
import { isMailbox } from './mailbox.js';
import {
  NotificationsRepository,
  type EmbedRecipientWrite,
  type RecipientRow,
} from './notifications.repository.js';
import { notificationsError } from './notifications.errors.js';
import { NotificationsService } from './notifications.service.js';

/** An embed user asked for, checked but not yet provisioned. */
interface EmbedAsk {
  index: number;
  tenant: string;
  externalId: string;
  input: NotificationRecipientInputDto;
}

/**
 * Who a notification is mailed to. Adding is all or nothing: every recipient is resolved (console
 * users by id or email in the account, embed users provisioned in their tenant with an address)
 * inside one unit of work, and one that does not resolve rolls everything back with a 400 naming
 * each. Adding and removing are idempotent; parallel adds of one recipient meet on the unique
 * keys of `notification_recipients`.
 */
@Injectable()
export class NotificationRecipientsService {
  constructor(
    private readonly db: Database,
    private readonly notifications: NotificationsService,
    private readonly repository: NotificationsRepository,
    private readonly directory: DirectoryService,
    private readonly tenants: EmbedTenantsService,
    private readonly embedUsers: EmbedUsersService,
    private readonly attributes: UserAttributesService,
    private readonly config: AppConfig,
  ) {}

  async list(
    actor: Principal,
    deploymentId: number,
    id: number,
    query: RecipientsQueryDto,
  ): Promise<Page<NotificationRecipientDto>> {
    await this.notifications.require(actor, deploymentId, id);
    const paging = resolvePaging(query, ['number']);
    const after = paging.mode === 'cursor' && paging.after ? (paging.after[0] as number) : null;
    const rows = await this.repository.recipients(id, after, fetchLimit(paging));
    return buildPage(rows, paging, (r) => [r.id], toRecipientDto);
  }

  async add(
    actor: Principal,
    deploymentId: number,
    id: number,
    dto: AddNotificationRecipientsDto,
  ): Promise<NotificationRecipientsMutationDto> {
    const slack = dto.recipients.findIndex((r) => r.type === 'SLACK');
    if (slack >= 0) {
      throw notificationsError(
        'unsupported_recipient_type',
        `recipients[${slack}]: SLACK recipients are not supported; use USER or EMBED_USER`,
      );
    }
    const errors: string[] = [];
    const userIds = new Set<number>();
    const emails = new Map<string, number>();
    const embeds = new Map<string, EmbedAsk>();
    dto.recipients.forEach((r, index) => {
      if (r.type === 'USER') {
        const hasId = r.userId != null;
        const hasEmail = r.email != null;
        if (hasId === hasEmail)
          errors.push(`recipients[${index}]: a USER recipient needs userId or email, not both`);
        else if (hasId) userIds.add(r.userId!);
        else emails.set(r.email!.trim().toLowerCase(), index);
        return;
      }
      if (r.embedTenantName == null || r.externalId == null) {
        errors.push(`recipients[${index}]: an EMBED_USER recipient needs embedTenantName and externalId`);
        return;
      }
      try {
        const tenant = normalizeTenantName(r.embedTenantName);
        const externalId = normalizeExternalId(r.externalId);
        embeds.set(`${tenant}\u0000${externalId}`, { index, tenant, externalId, input: r });
      } catch (err) {
        errors.push(`recipients[${index}]: ${err instanceof ApiError ? messageOf(err) : String(err)}`);
      }
    });
    if (errors.length > 0) throw notificationsError('invalid_notification_recipient', errors);
    // At least this many distinct recipients are asked for (a user may be named by id and by email).
    this.assertWithinLimit(embeds.size + Math.max(userIds.size, emails.size));
    await this.notifications.require(actor, deploymentId, id);
    const users = await this.resolveUsers(actor.accountId, [...userIds], emails, errors);
    await this.checkAttributeNames(actor.accountId, [...embeds.values()], errors);
    if (errors.length > 0) throw notificationsError('invalid_notification_recipient', errors);
    return this.db.transaction(async () => {
      // Held until commit: a notification deleted meanwhile is a 404, not a foreign key error.
      await this.notifications.require(actor, deploymentId, id, true);
      await this.repository.lockRecipients(id);
      const embedRows = await this.provision(actor.accountId, [...embeds.values()], errors);
      if (errors.length > 0) throw notificationsError('invalid_notification_recipient', errors);
      const createdUsers = new Set(await this.repository.addUsers(id, users));
      const written = await this.repository.upsertEmbedUsers(id, embedRows);
      // Counted under the recipients' lock: a refusal rolls back every row and embed user written.
      this.assertWithinLimit(await this.repository.countRecipients(id));
      const createdEmbeds = new Set(written.filter((w) => w.inserted).map((w) => w.embedUserId));
      const updatedEmbeds = new Set(written.filter((w) => !w.inserted).map((w) => w.embedUserId));
      const rows = await this.repository.recipientsAmong(
        id,
        users,
        embedRows.map((e) => e.embedUserId),
      );
      const out: NotificationRecipientsMutationDto = {
        createdRecipients: [],
        updatedRecipients: [],
        unchangedRecipients: [],
      };
      for (const row of rows) {
        const bucket =
          row.type === 'USER'
            ? createdUsers.has(row.userId!)
              ? out.createdRecipients
              : out.unchangedRecipients
            : createdEmbeds.has(row.embedUserId!)
              ? out.createdRecipients
              : updatedEmbeds.has(row.embedUserId!)
                ? out.updatedRecipients
                : out.unchangedRecipients;
        bucket.push(toRecipientDto(row));
      }
      return out;
    });
  }

  /** 400 when a notification would have more than NOTIFICATION_MAX_RECIPIENTS recipients. */
  private assertWithinLimit(count: number): void {
    const max = this.config.notifications.maxRecipients;
    if (count > max) {
      throw notificationsError(
        'notification_recipient_limit_reached',
        `A notification has at most ${max} recipients (console and embed users together); this request would give it ${count}. Nothing was written`,
      );
    }
  }

  /** Removes the recipients named (unknown ones and Slack channels are no-ops). */
  async remove(
    actor: Principal,
    deploymentId: number,
    id: number,
    dto: RemoveNotificationRecipientsDto,
  ): Promise<void> {
    const errors: string[] = [];
    const userIds: number[] = [];
    const embed: Array<{ id: number; tenant: string }> = [];
    dto.recipients.forEach((r, index) => {
      if (r.type === 'SLACK') return;
      const rid = typeof r.id === 'number' ? r.id : /^[1-9]\d{0,9}$/.test(r.id) ? Number(r.id) : NaN;
      if (!Number.isInteger(rid) || rid > 2_147_483_647) {
        errors.push(`recipients[${index}].id must be the ${r.type === 'USER' ? 'userId' : 'embedUserId'}`);
        return;
      }
      if (r.type === 'USER') userIds.push(rid);
      else if (r.embedTenantName == null) {
        errors.push(`recipients[${index}]: an EMBED_USER recipient needs embedTenantName`);
      } else {
        embed.push({ id: rid, tenant: r.embedTenantName.trim().toLowerCase() });
      }
    });
    if (errors.length > 0) throw coreError('validation_failed', errors);
    await this.db.transaction(async () => {
      await this.notifications.require(actor, deploymentId, id);
      await this.repository.lockRecipients(id);
      await this.repository.removeRecipients(id, userIds, embed);
    });
  }

  /** An embed recipient's `userAttributes` must name attributes the account defines. */
  private async checkAttributeNames(accountId: number, asks: EmbedAsk[], errors: string[]): Promise<void> {
    const named = asks.flatMap((ask) => (ask.input.userAttributes ?? []).map((a) => a.name));
    const unknown = new Set(await this.attributes.unknownNames(accountId, named));
    if (unknown.size === 0) return;
    for (const ask of asks) {
      for (const { name } of ask.input.userAttributes ?? []) {
        if (unknown.has(name)) {
          errors.push(
            `recipients[${ask.index}]: userAttributes names ${name}, which is not a user attribute of the account`,
          );
        }
      }
    }
  }

  /** Console users by id and email, every one in the account with a real address; else errors. */
  private async resolveUsers(
    accountId: number,
    ids: number[],
    emails: Map<string, number>,
    errors: string[],
  ): Promise<number[]> {
    if (ids.length === 0 && emails.size === 0) return [];
    const { rows } = await this.directory.findUsers(
      accountId,
      {
        sql: '(u.id = ANY(:recipientIds::int[]) OR lower(u.email) = ANY(:recipientEmails::text[]))',
        params: { recipientIds: ids, recipientEmails: [...emails.keys()] },
      },
      0,
      ids.length + emails.size,
    );
    const byId = new Map(rows.map((u) => [u.id, u]));
    const byEmail = new Map(rows.map((u) => [u.email.toLowerCase(), u]));
    const out = new Set<number>();
    for (const id of ids) {
      const user = byId.get(id);
      if (!user) errors.push(`userId ${id} is not a user of the account`);
      else if (isNoEmail(user.email)) errors.push(`userId ${id} has no email address`);
      else if (!isMailbox(user.email)) errors.push(`userId ${id}: its email is not a single address`);
      else out.add(id);
    }
    for (const [email] of emails) {
      const user = byEmail.get(email);
      if (!user) errors.push(`email ${email} is not the address of a user of the account`);
      else if (!isMailbox(user.email)) errors.push(`email ${email}: not a single address`);
      else out.add(user.id);
    }
    return [...out];
  }

  /**
   * Provisions the embed users asked for (inside the caller's unit of work, which a failure rolls
   * back) and answers their recipient rows; a user without a deliverable address is an error.
   */
  private async provision(
    accountId: number,
    asks: EmbedAsk[],
    errors: string[],
  ): Promise<EmbedRecipientWrite[]> {
    const provisioned: Array<{ ask: EmbedAsk; id: number }> = [];
    for (const ask of asks) {
      try {
        const tenant = await this.tenants.ensure(accountId, ask.tenant);
        const state = desiredState({
          externalId: ask.externalId,
          email: ask.input.email ?? undefined,
          groups: ask.input.groups ?? undefined,
        });
        provisioned.push({ ask, id: await this.embedUsers.apply(accountId, tenant, state) });
      } catch (err) {
        if (!(err instanceof ApiError) || err.getStatus() >= 500 || err.getStatus() === 429) throw err;
        errors.push(`recipients[${ask.index}]: ${messageOf(err)}`);
      }
    }
    const found = await this.embedUsers.getMany(provisioned.map((p) => p.id));
    const rows: EmbedRecipientWrite[] = [];
    for (const { ask, id } of provisioned) {
      const user = found.get(id);
      const stored = user?.email ?? '';
      const email = !stored.toLowerCase().endsWith(`@${SYNTHETIC_EMAIL_DOMAIN}`)
        ? stored
        : isMailbox(ask.externalId)
          ? ask.externalId
          : null;
      if (!email) {
        errors.push(
          `recipients[${ask.index}]: embed user ${ask.externalId} of ${ask.tenant} has no email; give email, or an externalId that is a single address`,
        );
        continue;
      }
      if (!isMailbox(email)) {
        errors.push(
          `recipients[${ask.index}]: the email of embed user ${ask.externalId} is not a single address`,
        );
        continue;
      }
      rows.push({
        embedUserId: id,
        embedTenantName: ask.tenant,
        externalId: ask.externalId,
        email,
        securityContext: ask.input.securityContext ?? null,
        userAttributes: ask.input.userAttributes
          ? JSON.parse(JSON.stringify(ask.input.userAttributes))
          : null,
        groups: ask.input.groups ?? null,
      });
    }
    return rows;
  }
}

function messageOf(err: ApiError): string {
  const messages = err.messages;
  return Array.isArray(messages) ? messages.join('; ') : messages;
}

export function toRecipientDto(row: RecipientRow): NotificationRecipientDto {
  const user = row.type === 'USER';
  return {
    type: row.type,
    userId: user ? row.userId : null,
    username: user ? row.username : null,
    email: row.email,
    embedUserId: user ? null : row.embedUserId,
    embedTenantName: user ? null : row.embedTenantName,
    externalId: user ? null : row.externalId,
    channelId: null,
    channelName: null,
  };
}
