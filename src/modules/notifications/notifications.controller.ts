import { Body, Controller, Delete, Get, HttpCode, Post, Put, Query, UseFilters } from '@nestjs/common';
import { ApiBody, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Action } from '../../core/auth/action.js';
import { CurrentPrincipal, RequireActions } from '../../core/auth/access.decorators.js';
import type { Principal } from '../../core/auth/principal.js';
import { ApiErrors } from '../../core/openapi/api-errors.decorator.js';
import { BigIdParam, IdParam } from '../../core/http/id.pipe.js';
import { refuseBody } from '../../core/http/no-body.js';
import type { Page } from '../../core/http/pagination.js';
import { DeploymentScopeFilter } from '../deployments/deployment-scope.filter.js';
import {
  CreateNotificationDto,
  NoFieldsBodyDto,
  NotificationDto,
  NotificationRunDto,
  NotificationsListDto,
  NotificationsQueryDto,
  UpdateNotificationDto,
} from './dto/notification.dto.js';
import {
  AddNotificationRecipientsDto,
  NotificationDeliveriesListDto,
  NotificationDeliveryDto,
  NotificationRecipientsListDto,
  NotificationRecipientsMutationDto,
  RecipientsQueryDto,
  RemoveNotificationRecipientsDto,
  type NotificationRecipientDto,
} from './dto/recipient.dto.js';
import { NotificationOperationsService } from './notification-operations.service.js';
import { NotificationRecipientsService } from './notification-recipients.service.js';
import { NotificationsService } from './notifications.service.js';
import { Audited } from '../../core/audit/audited.decorator.js';

const DELIVERY_ID = 'A delivery id, as `id` of the deliveries list gives it';

const ADMIN_ONLY = 'Admin only.';

@ApiTags('Notifications')
@UseFilters(DeploymentScopeFilter)
@RequireActions(Action.All)
@Controller('api/v1/deployments/:deploymentId/notifications')
export class NotificationsController {
  constructor(
    private readonly notifications: NotificationsService,
    private readonly recipients: NotificationRecipientsService,
    private readonly operations: NotificationOperationsService,
  ) {}

  @Get()
  @ApiOperation({
    summary: 'List scheduled notifications',
    description:
      `${ADMIN_ONLY} Newest first, cursor-paged. Filters: one dashboard (\`dashboardId\` or \`dashboardPublicId\`) ` +
      'and one recipient (`recipientUserId`, `recipientEmail`, or `recipientEmbedTenantName` with ' +
      '`recipientExternalId`); two identifiers of one dimension are a 400.',
  })
  @ApiOkResponse({ type: NotificationsListDto })
  @ApiErrors('validation_failed', 'invalid_cursor', 'deployment_not_found')
  getNotifications(
    @CurrentPrincipal() actor: Principal,
    @IdParam('deploymentId') deploymentId: number,
    @Query() query: NotificationsQueryDto,
  ): Promise<Page<NotificationDto>> {
    return this.notifications.list(actor, deploymentId, query);
  }

  @Post()
  @Audited()
  @HttpCode(200)
  @ApiOperation({
    summary: 'Create a scheduled notification',
    description:
      `${ADMIN_ONLY} A recurring run of a published dashboard of the deployment (\`dashboardId\` or ` +
      '`dashboardPublicId`, exactly one; another deployment’s is a 404), mailed to its recipients as an email ' +
      'with the reports’ tables and the dashboard attached as PDF or PNG. The cadence is `scheduleType` with ' +
      'its fields, or a five-field `customCron`, read in `timezone` (IANA, default UTC) across daylight-saving ' +
      'changes; a cron that never fires, or fires twice closer than the minimum interval ' +
      '(`NOTIFICATION_MIN_INTERVAL_MINUTES`, 15 by default), is a 400. Created without recipients.',
  })
  @ApiOkResponse({ type: NotificationDto })
  @ApiErrors('validation_failed', 'deployment_not_found', 'dashboard_not_found')
  createNotification(
    @CurrentPrincipal() actor: Principal,
    @IdParam('deploymentId') deploymentId: number,
    @Body() dto: CreateNotificationDto,
  ): Promise<NotificationDto> {
    return this.notifications.create(actor, deploymentId, dto);
  }

  @Get(':id')
  @ApiOperation({ summary: 'Get a scheduled notification', description: ADMIN_ONLY })
  @ApiOkResponse({ type: NotificationDto })
  @ApiErrors('validation_failed', 'deployment_not_found', 'notification_not_found')
  getNotification(
    @CurrentPrincipal() actor: Principal,
    @IdParam('deploymentId') deploymentId: number,
    @IdParam('id') id: number,
  ): Promise<NotificationDto> {
    return this.notifications.get(actor, deploymentId, id);
  }

  @Put(':id')
  @Audited()
  @ApiOperation({
    summary: 'Update a scheduled notification',
    description:
      `${ADMIN_ONLY} Any subset of the fields; omitted ones are unchanged and recipients are never touched. ` +
      'A new schedule or time zone, or enabling it again, takes effect from now; such a schedule must not ' +
      'fire twice closer than the minimum interval (400).',
  })
  @ApiOkResponse({ type: NotificationDto })
  @ApiErrors('validation_failed', 'deployment_not_found', 'notification_not_found')
  updateNotification(
    @CurrentPrincipal() actor: Principal,
    @IdParam('deploymentId') deploymentId: number,
    @IdParam('id') id: number,
    @Body() dto: UpdateNotificationDto,
  ): Promise<NotificationDto> {
    return this.notifications.update(actor, deploymentId, id, dto);
  }

  @Delete(':id')
  @Audited()
  @HttpCode(204)
  @ApiOperation({
    summary: 'Delete a scheduled notification',
    description: `${ADMIN_ONLY} With its recipients, runs, deliveries and schedule.`,
  })
  @ApiNoContentResponse({ description: 'Deleted' })
  @ApiErrors('validation_failed', 'deployment_not_found', 'notification_not_found')
  async deleteNotification(
    @CurrentPrincipal() actor: Principal,
    @IdParam('deploymentId') deploymentId: number,
    @IdParam('id') id: number,
  ): Promise<void> {
    await this.notifications.remove(actor, deploymentId, id);
  }

  @Get(':id/recipients')
  @ApiOperation({ summary: 'List notification recipients', description: `${ADMIN_ONLY} Newest first.` })
  @ApiOkResponse({ type: NotificationRecipientsListDto })
  @ApiErrors('validation_failed', 'invalid_cursor', 'deployment_not_found', 'notification_not_found')
  getRecipients(
    @CurrentPrincipal() actor: Principal,
    @IdParam('deploymentId') deploymentId: number,
    @IdParam('id') id: number,
    @Query() query: RecipientsQueryDto,
  ): Promise<Page<NotificationRecipientDto>> {
    return this.recipients.list(actor, deploymentId, id, query);
  }

  @Post(':id/recipients')
  @Audited()
  @HttpCode(200)
  @ApiOperation({
    summary: 'Add notification recipients',
    description:
      `${ADMIN_ONLY} 1 to 1000 recipients: \`USER\` by \`userId\` or \`email\` (a user of the account), ` +
      '`EMBED_USER` by `embedTenantName` and `externalId` (provisioned when new; `securityContext`, ' +
      '`userAttributes` and `groups` drive what it is shown). `SLACK` is a 400. Every recipient must ' +
      'resolve to a single address (an embed user’s own, or an address-shaped `externalId`; no display name, ' +
      'comment, quoted part, list or control character), or the request fails with 400 and writes nothing. A ' +
      'notification has at most `NOTIFICATION_MAX_RECIPIENTS` recipients (500 by default): a request past it is ' +
      'a 400 that writes nothing. Idempotent: each recipient is answered as created, updated or unchanged.',
  })
  @ApiOkResponse({ type: NotificationRecipientsMutationDto })
  @ApiErrors(
    'validation_failed',
    'unsupported_recipient_type',
    'invalid_notification_recipient',
    'notification_recipient_limit_reached',
    'deployment_not_found',
    'notification_not_found',
    'embed_user_limit_reached',
  )
  addRecipients(
    @CurrentPrincipal() actor: Principal,
    @IdParam('deploymentId') deploymentId: number,
    @IdParam('id') id: number,
    @Body() dto: AddNotificationRecipientsDto,
  ): Promise<NotificationRecipientsMutationDto> {
    return this.recipients.add(actor, deploymentId, id, dto);
  }

  @Delete(':id/recipients')
  @Audited()
  @HttpCode(204)
  @ApiOperation({
    summary: 'Remove notification recipients',
    description:
      `${ADMIN_ONLY} 1 to 1000 entries \`{type, id, embedTenantName?}\`: \`id\` is the \`userId\` (USER) or ` +
      '`embedUserId` (EMBED_USER, with its `embedTenantName`). Idempotent.',
  })
  @ApiNoContentResponse({ description: 'Removed' })
  @ApiErrors('validation_failed', 'deployment_not_found', 'notification_not_found')
  async removeRecipients(
    @CurrentPrincipal() actor: Principal,
    @IdParam('deploymentId') deploymentId: number,
    @IdParam('id') id: number,
    @Body() dto: RemoveNotificationRecipientsDto,
  ): Promise<void> {
    await this.recipients.remove(actor, deploymentId, id, dto);
  }

  @Get(':id/deliveries')
  @ApiOperation({
    summary: 'List the deliveries of a notification',
    description:
      `${ADMIN_ONLY} One per run and recipient, newest first: the occurrence, the address, the status ` +
      '(`queued`, `held` while the notification is paused, `sending`, `sent`, `failed`, `unknown`, or `skipped` ' +
      'past the account’s hourly delivery limit), attempts, the last error and SMTP answer, the resends, and ' +
      '`aiSummary: not_produced` when the notification asks for an AI summary (none is made).',
  })
  @ApiOkResponse({ type: NotificationDeliveriesListDto })
  @ApiErrors('validation_failed', 'invalid_cursor', 'deployment_not_found', 'notification_not_found')
  getNotificationDeliveries(
    @CurrentPrincipal() actor: Principal,
    @IdParam('deploymentId') deploymentId: number,
    @IdParam('id') id: number,
    @Query() query: RecipientsQueryDto,
  ): Promise<Page<NotificationDeliveryDto>> {
    return this.notifications.deliveries(actor, deploymentId, id, query);
  }

  @Post(':id/run')
  @Audited()
  @HttpCode(200)
  @ApiOperation({
    summary: 'Run a scheduled notification now',
    description:
      `${ADMIN_ONLY} One run outside the schedule, now, through the same job and rules as a scheduled one (its ` +
      'recipients, security contexts, the hourly delivery limit); the schedule’s next occurrence does not move. ' +
      'Answers the run, `queued`; its deliveries appear in the deliveries list. A paused or disabled ' +
      'notification runs too. One run now per notification at a time: another while one is queued or running ' +
      'is a 409 `notification_run_in_progress`, and starts nothing. Takes no body.',
  })
  @ApiBody({ type: NoFieldsBodyDto, required: false })
  @ApiOkResponse({ type: NotificationRunDto })
  @ApiErrors(
    'validation_failed',
    'deployment_not_found',
    'notification_not_found',
    'notification_run_in_progress',
    'queue_unavailable',
  )
  runNotification(
    @CurrentPrincipal() actor: Principal,
    @IdParam('deploymentId') deploymentId: number,
    @IdParam('id') id: number,
    @Body() body: unknown,
  ): Promise<NotificationRunDto> {
    refuseBody(body, 'run');
    return this.operations.runNow(actor, deploymentId, id);
  }

  @Post(':id/deliveries/:deliveryId/resend')
  @Audited()
  @HttpCode(200)
  @ApiOperation({
    summary: 'Resend a failed delivery',
    description:
      `${ADMIN_ONLY} Sends a \`failed\` delivery once more, to that recipient only, with the email its run made, ` +
      'at the recipient’s address now (a user’s email as it is now, an embed recipient’s address as now recorded; ' +
      'the delivery’s own when the recipient is gone). The same delivery goes back to `queued` (its `resends` ' +
      'keep the failure), then `sent` or `failed`. Of parallel resends one acts; a delivery not `failed` is a 409 ' +
      '`delivery_not_failed`, one whose run made nothing to send (or to a deactivated user) a 409 ' +
      '`delivery_not_resendable`. Counted against the hourly delivery limit. Takes no body.',
  })
  @ApiBody({ type: NoFieldsBodyDto, required: false })
  @ApiOkResponse({ type: NotificationDeliveryDto })
  @ApiErrors(
    'validation_failed',
    'deployment_not_found',
    'notification_not_found',
    'notification_delivery_not_found',
    'delivery_not_failed',
    'delivery_not_resendable',
    'notification_delivery_limit_reached',
    'queue_unavailable',
  )
  resendNotificationDelivery(
    @CurrentPrincipal() actor: Principal,
    @IdParam('deploymentId') deploymentId: number,
    @IdParam('id') id: number,
    @BigIdParam('deliveryId', DELIVERY_ID) deliveryId: string,
    @Body() body: unknown,
  ): Promise<NotificationDeliveryDto> {
    refuseBody(body, 'resend');
    return this.operations.resend(actor, deploymentId, id, deliveryId);
  }

  @Post(':id/pause')
  @Audited()
  @HttpCode(200)
  @ApiOperation({
    summary: 'Pause a scheduled notification',
    description:
      `${ADMIN_ONLY} Its schedule stops firing and the deliveries of its scheduled runs not sent yet wait ` +
      '(`held`), until it is resumed; `pausedAt` says since when. `isEnabled` is left as it is. Run now and ' +
      'resends still act. Idempotent. Takes no body.',
  })
  @ApiBody({ type: NoFieldsBodyDto, required: false })
  @ApiOkResponse({ type: NotificationDto })
  @ApiErrors('validation_failed', 'deployment_not_found', 'notification_not_found')
  pauseNotification(
    @CurrentPrincipal() actor: Principal,
    @IdParam('deploymentId') deploymentId: number,
    @IdParam('id') id: number,
    @Body() body: unknown,
  ): Promise<NotificationDto> {
    refuseBody(body, 'pause');
    return this.operations.pause(actor, deploymentId, id);
  }

  @Post(':id/resume')
  @Audited()
  @HttpCode(200)
  @ApiOperation({
    summary: 'Resume a paused notification',
    description:
      `${ADMIN_ONLY} The held deliveries go, and the schedule (when the notification is enabled) fires from its ` +
      'next occurrence after now: occurrences missed while paused are not made up. Idempotent. Takes no body.',
  })
  @ApiBody({ type: NoFieldsBodyDto, required: false })
  @ApiOkResponse({ type: NotificationDto })
  @ApiErrors('validation_failed', 'deployment_not_found', 'notification_not_found')
  resumeNotification(
    @CurrentPrincipal() actor: Principal,
    @IdParam('deploymentId') deploymentId: number,
    @IdParam('id') id: number,
    @Body() body: unknown,
  ): Promise<NotificationDto> {
    refuseBody(body, 'resume');
    return this.operations.resume(actor, deploymentId, id);
  }
}
