import { Body, Controller, Delete, Get, HttpCode, Patch, Post, Query } from '@nestjs/common';
import { ApiBody, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Audited } from '../../core/audit/audited.decorator.js';
import { Action } from '../../core/auth/action.js';
import { CurrentPrincipal, RequireActions } from '../../core/auth/access.decorators.js';
import type { Principal } from '../../core/auth/principal.js';
import { BigIdParam, IdParam } from '../../core/http/id.pipe.js';
import { refuseBody } from '../../core/http/no-body.js';
import { ApiErrors } from '../../core/openapi/api-errors.decorator.js';
import {
  WebhookDeliveriesListDto,
  WebhookDeliveriesQueryDto,
  WebhookDeliveryDetailDto,
  WebhookDeliveryDto,
} from './dto/webhook-delivery.dto.js';
import {
  CreateWebhookEndpointDto,
  NoFieldsDto,
  UpdateWebhookEndpointDto,
  WebhookEndpointDto,
  WebhookEndpointsListDto,
  WebhookEndpointsQueryDto,
  WebhookEndpointWithSecretDto,
} from './dto/webhook.dto.js';
import { WebhookDeliveriesService } from './webhook-deliveries.service.js';
import { WebhooksService } from './webhooks.service.js';

const DELIVERY_ID = 'A delivery id, as `id` of the delivery log gives it';

const SIGNED =
  'Each event is POSTed as JSON (`{id, type, timestamp, resource, data}`) and signed as Standard Webhooks does: ' +
  '`webhook-id`, `webhook-timestamp` and `webhook-signature` (`v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">`).';

/** Webhook endpoints of the account and their delivery logs (docs/webhooks.md). Tenant admins only. */
@ApiTags('Webhooks')
@Controller('api/v1/webhooks')
@RequireActions(Action.All)
export class WebhooksController {
  constructor(
    private readonly webhooks: WebhooksService,
    private readonly deliveries: WebhookDeliveriesService,
  ) {}

  @Get()
  @ApiOperation({ summary: 'List the account’s webhook endpoints', description: 'Ordered by id.' })
  @ApiOkResponse({ type: WebhookEndpointsListDto })
  @ApiErrors('validation_failed', 'invalid_cursor')
  listWebhooks(
    @CurrentPrincipal() actor: Principal,
    @Query() query: WebhookEndpointsQueryDto,
  ): Promise<WebhookEndpointsListDto> {
    return this.webhooks.list(actor, query);
  }

  @Post()
  @Audited()
  @HttpCode(200)
  @ApiOperation({
    summary: 'Create a webhook endpoint',
    description:
      `${SIGNED} The answer holds the signing \`secret\`, shown this once. The URL must be an absolute https (or ` +
      'http) URL on a host this service connects to: loopback, private, link-local and metadata addresses are ' +
      'refused (400 `invalid_webhook_url`) unless the operator opens them (`OUTBOUND_ALLOWED_HOSTS`). At most ' +
      '`WEBHOOK_MAX_ENDPOINTS` (default 20) per account: 409 `webhook_limit_reached` past it.',
  })
  @ApiOkResponse({ type: WebhookEndpointWithSecretDto })
  @ApiErrors('validation_failed', 'invalid_webhook_url', 'webhook_limit_reached')
  createWebhook(
    @CurrentPrincipal() actor: Principal,
    @Body() dto: CreateWebhookEndpointDto,
  ): Promise<WebhookEndpointWithSecretDto> {
    return this.webhooks.create(actor, dto);
  }

  @Get(':id')
  @ApiOperation({ summary: 'Get a webhook endpoint', description: 'Never its secret.' })
  @ApiOkResponse({ type: WebhookEndpointDto })
  @ApiErrors('validation_failed', 'webhook_not_found')
  getWebhook(@CurrentPrincipal() actor: Principal, @IdParam('id') id: number): Promise<WebhookEndpointDto> {
    return this.webhooks.get(actor, id);
  }

  @Patch(':id')
  @Audited()
  @ApiOperation({
    summary: 'Change a webhook endpoint',
    description:
      'Omitted fields are left alone. `enabled: true` on a disabled endpoint clears `disabledReason`, ' +
      '`disabledAt` and `consecutiveFailures`; `enabled: false` disables it, and its pending deliveries end ' +
      '`failed` unsent. A new `url` is checked as on create.',
  })
  @ApiOkResponse({ type: WebhookEndpointDto })
  @ApiErrors('validation_failed', 'webhook_not_found', 'invalid_webhook_url')
  updateWebhook(
    @CurrentPrincipal() actor: Principal,
    @IdParam('id') id: number,
    @Body() dto: UpdateWebhookEndpointDto,
  ): Promise<WebhookEndpointDto> {
    return this.webhooks.update(actor, id, dto);
  }

  @Delete(':id')
  @Audited()
  @HttpCode(204)
  @ApiOperation({
    summary: 'Delete a webhook endpoint',
    description:
      'Its deliveries go with it; pending ones are not sent. The events stay in the account’s log.',
  })
  @ApiNoContentResponse({ description: 'Deleted' })
  @ApiErrors('validation_failed', 'webhook_not_found')
  deleteWebhook(@CurrentPrincipal() actor: Principal, @IdParam('id') id: number): Promise<void> {
    return this.webhooks.remove(actor, id);
  }

  @Post(':id/rotate-secret')
  @Audited()
  @HttpCode(200)
  @ApiOperation({
    summary: 'Rotate a webhook endpoint’s signing secret',
    description:
      'Answers the endpoint with its new `secret`, shown this once. For 24 hours the previous secret signs too: ' +
      '`webhook-signature` then carries two signatures, the new one first (`previousSecretExpiresAt`).',
  })
  @ApiBody({ type: NoFieldsDto, required: false })
  @ApiOkResponse({ type: WebhookEndpointWithSecretDto })
  @ApiErrors('validation_failed', 'webhook_not_found')
  rotateWebhookSecret(
    @CurrentPrincipal() actor: Principal,
    @IdParam('id') id: number,
    @Body() body: unknown,
  ): Promise<WebhookEndpointWithSecretDto> {
    refuseBody(body, 'rotate-secret');
    return this.webhooks.rotateSecret(actor, id);
  }

  @Get(':id/deliveries')
  @ApiOperation({
    summary: 'List a webhook endpoint’s deliveries',
    description:
      'Newest first; filtered by `status` and `eventType` when given. Kept `WEBHOOK_RETENTION_DAYS`.',
  })
  @ApiOkResponse({ type: WebhookDeliveriesListDto })
  @ApiErrors('validation_failed', 'invalid_cursor', 'webhook_not_found')
  listWebhookDeliveries(
    @CurrentPrincipal() actor: Principal,
    @IdParam('id') id: number,
    @Query() query: WebhookDeliveriesQueryDto,
  ): Promise<WebhookDeliveriesListDto> {
    return this.deliveries.list(actor, id, query);
  }

  @Get(':id/deliveries/:deliveryId')
  @ApiOperation({
    summary: 'Get a webhook delivery',
    description: 'With the event exactly as it is POSTed, and every attempt (when, status, duration, error).',
  })
  @ApiOkResponse({ type: WebhookDeliveryDetailDto })
  @ApiErrors('validation_failed', 'webhook_not_found', 'webhook_delivery_not_found')
  getWebhookDelivery(
    @CurrentPrincipal() actor: Principal,
    @IdParam('id') id: number,
    @BigIdParam('deliveryId', DELIVERY_ID) deliveryId: string,
  ): Promise<WebhookDeliveryDetailDto> {
    return this.deliveries.get(actor, id, deliveryId);
  }

  @Post(':id/deliveries/:deliveryId/redeliver')
  @Audited()
  @HttpCode(200)
  @ApiOperation({
    summary: 'Redeliver a webhook event',
    description:
      'Queues a new delivery of the same event (the same `webhook-id`), whatever became of this one; answers it. ' +
      'A disabled endpoint: 409 `webhook_disabled`.',
  })
  @ApiBody({ type: NoFieldsDto, required: false })
  @ApiOkResponse({ type: WebhookDeliveryDto })
  @ApiErrors(
    'validation_failed',
    'webhook_not_found',
    'webhook_delivery_not_found',
    'webhook_disabled',
    'queue_unavailable',
  )
  redeliverWebhookDelivery(
    @CurrentPrincipal() actor: Principal,
    @IdParam('id') id: number,
    @BigIdParam('deliveryId', DELIVERY_ID) deliveryId: string,
    @Body() body: unknown,
  ): Promise<WebhookDeliveryDto> {
    refuseBody(body, 'redeliver');
    return this.deliveries.redeliver(actor, id, deliveryId);
  }
}
