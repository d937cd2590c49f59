import { Body, Controller, Delete, Get, HttpCode, Post, Query } from '@nestjs/common';
import { ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Authenticated, CurrentPrincipal } from '../../core/auth/access.decorators.js';
import type { Principal } from '../../core/auth/principal.js';
import { ApiErrors } from '../../core/openapi/api-errors.decorator.js';
import { IdParam } from '../../core/http/id.pipe.js';
import { ApiBodyExamples } from '../../core/openapi/api-body-examples.js';
import { ApiKeysService } from './api-keys.service.js';
import { API_KEY_CREATED_EXAMPLE, CREATE_API_KEY_EXAMPLES } from './users.examples.js';
import {
  ApiKeyCreateDto,
  ApiKeyCreatedDto,
  ApiKeyDto,
  ApiKeysListDto,
  ApiKeysQueryDto,
} from './dto/api-key.dto.js';
import { Audited } from '../../core/audit/audited.decorator.js';

@ApiTags('API Keys')
@Controller('api/v1/api-keys')
@Authenticated()
export class ApiKeysController {
  constructor(private readonly apiKeys: ApiKeysService) {}

  @Get()
  @ApiOperation({
    summary: 'List your active API keys',
    description: 'Secrets are never returned after creation.',
  })
  @ApiOkResponse({ type: ApiKeysListDto })
  @ApiErrors('validation_failed')
  getApiKeys(@CurrentPrincipal() actor: Principal, @Query() query: ApiKeysQueryDto): Promise<ApiKeysListDto> {
    return this.apiKeys.list(actor, query);
  }

  @Get(':id')
  @ApiOperation({
    summary: 'Get one of your active API keys',
    description:
      'As the list shows it; the secret is never returned after creation. A revoked key, or one of another ' +
      'user, is a 404.',
  })
  @ApiOkResponse({ type: ApiKeyDto })
  @ApiErrors('validation_failed', 'api_key_not_found')
  getApiKey(@CurrentPrincipal() actor: Principal, @IdParam('id') id: number): Promise<ApiKeyDto> {
    return this.apiKeys.get(actor, id);
  }

  @Post()
  @Audited()
  @HttpCode(200)
  @ApiOperation({ summary: 'Create an API key', description: 'The response carries the secret, once.' })
  @ApiBodyExamples(ApiKeyCreateDto, CREATE_API_KEY_EXAMPLES)
  @ApiOkResponse({
    type: ApiKeyCreatedDto,
    examples: { created: { summary: 'The new key and its secret', value: API_KEY_CREATED_EXAMPLE } },
  })
  @ApiErrors('validation_failed')
  createApiKey(
    @CurrentPrincipal() actor: Principal,
    @Body() dto: ApiKeyCreateDto,
  ): Promise<ApiKeyCreatedDto> {
    return this.apiKeys.create(actor, dto);
  }

  @Delete(':id')
  @Audited()
  @HttpCode(204)
  @ApiOperation({ summary: 'Revoke an API key', description: 'It stops working immediately.' })
  @ApiNoContentResponse()
  @ApiErrors('validation_failed', 'api_key_not_found')
  async revokeApiKey(@CurrentPrincipal() actor: Principal, @IdParam('id') id: number): Promise<void> {
    await this.apiKeys.revoke(actor, id);
  }
}
