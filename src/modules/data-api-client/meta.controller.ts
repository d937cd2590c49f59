import { Body, Controller, HttpCode, Post } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Audited } from '../../core/audit/audited.decorator.js';
import { CurrentPrincipal, RequireObjectAction } from '../../core/auth/access.decorators.js';
import { Action } from '../../core/auth/action.js';
import type { Principal } from '../../core/auth/principal.js';
import { ApiErrors } from '../../core/openapi/api-errors.decorator.js';
import { DataModelMetaService } from './data-model-meta.service.js';
import { MetaRequestDto, MetaResponseDto } from './dto/meta.dto.js';

/** The command-line tool's `meta` (docs/command-line-tool.md): a deployment's model metadata. */
@ApiTags('Data Model')
@Controller('api/v1/meta')
export class MetaController {
  constructor(private readonly meta: DataModelMetaService) {}

  @Post()
  @Audited()
  @HttpCode(200)
  @RequireObjectAction(Action.SchemaRead)
  @ApiOperation({
    summary: "A deployment's data-model metadata",
    description:
      "Changes nothing (a POST, audited as every POST is, because the tool sends one): asks the deployment's production data API for `/v1/meta` " +
      '(signed with its `CUBEJS_API_SECRET`, an empty security context) and answers its cubes and views, only ' +
      'those `selectors.cubes` names when given. Needs `SchemaRead` on the deployment. Also served with a ' +
      'trailing slash, as the command-line tool calls it.',
  })
  @ApiOkResponse({ type: MetaResponseDto })
  @ApiErrors(
    'validation_failed',
    'deployment_not_found',
    'data_api_not_configured',
    'data_api_unavailable',
    'data_api_timeout',
    'data_api_failed',
  )
  postDataModelMeta(
    @CurrentPrincipal() actor: Principal,
    @Body() dto: MetaRequestDto,
  ): Promise<MetaResponseDto> {
    return this.meta.meta(actor, dto.selectors);
  }
}
