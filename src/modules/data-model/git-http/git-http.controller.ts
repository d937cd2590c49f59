import { Controller, Get, HttpCode, Post, Query, Req, Res, UseFilters } from '@nestjs/common';
import {
  ApiBody,
  ApiConsumes,
  ApiForbiddenResponse,
  ApiOkResponse,
  ApiOperation,
  ApiQuery,
  ApiTags,
} from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { Audited } from '../../../core/audit/audited.decorator.js';
import { CurrentPrincipal, RequireObjectAction } from '../../../core/auth/access.decorators.js';
import { Action } from '../../../core/auth/action.js';
import type { Principal } from '../../../core/auth/principal.js';
import { IdParam } from '../../../core/http/id.pipe.js';
import { ErrorShape, StreamedBody } from '../../../core/http/route-behaviour.js';
import { ApiErrors } from '../../../core/openapi/api-errors.decorator.js';
import { DeploymentScopeFilter } from '../../deployments/deployment-scope.filter.js';
import { DATA_MODEL_ROUTES } from '../data-model.routes.js';
import { UPLOAD_PACK_REQUEST } from './fetch-request.js';
import { renderGitError } from './git-http.errors.js';
import { ADVERTISEMENT, GitHttpService, RECEIVE_PACK, UPLOAD_PACK } from './git-http.service.js';
import { UPLOAD_PACK_RESULT } from './upload-pack.js';

const RECEIVE_PACK_REQUEST = 'application/x-git-receive-pack-request';
const BINARY = { schema: { type: 'string', format: 'binary' } } as const;
/** Git sends the token as the password of HTTP Basic; Bearer works too. */
const GitAccess = () => RequireObjectAction(Action.SchemaRead, { basicAuth: true });
const FETCH_LIMITS = ['git_fetch_limit_reached', 'git_fetch_busy', 'git_fetch_timeout'] as const;

/**
 * The deployment's repository over git's smart HTTP protocol (`git clone
 * https://<host>/build/api/v1/deployments/<id>/git`), for clones and fetches; pushes are refused.
 * Anything else under `.../git/` (the dumb protocol's files) is no route: 404. Errors answer a git
 * client in text it shows, with a Basic challenge on 401 ({@link renderGitError}).
 */
@ApiTags('Data Model')
@ErrorShape(renderGitError)
@UseFilters(DeploymentScopeFilter)
@Controller(`${DATA_MODEL_ROUTES}/git`)
export class GitHttpController {
  constructor(private readonly git: GitHttpService) {}

  @Get('info/refs')
  @GitAccess()
  @ApiOperation({
    summary: 'Git: list the refs served (first request of a clone or fetch)',
    description:
      'Smart HTTP, protocol v0: the shared branches and your own dev branches, never pending changes ' +
      'or other users’ dev branches. `service=git-receive-pack` (a push) answers ' +
      '403 `git_push_not_supported`.',
  })
  @ApiQuery({ name: 'service', required: true, enum: [UPLOAD_PACK, RECEIVE_PACK] })
  @ApiOkResponse({ description: 'The refs advertisement', content: { [ADVERTISEMENT]: BINARY } })
  @ApiErrors(
    'validation_failed',
    'deployment_not_found',
    'git_push_not_supported',
    'service_unavailable',
    ...FETCH_LIMITS,
  )
  gitInfoRefs(
    @CurrentPrincipal() actor: Principal,
    @IdParam('deploymentId') id: number,
    @Query('service') service: unknown,
    @Res() res: Response,
  ): Promise<void> {
    return this.git.advertise(actor, id, service, res);
  }

  @Post('git-upload-pack')
  @Audited()
  @HttpCode(200)
  @StreamedBody(UPLOAD_PACK_REQUEST)
  @GitAccess()
  @ApiOperation({
    summary: 'Git: fetch objects (a clone’s or fetch’s pack)',
    description:
      'Smart HTTP, protocol v0, stateless: a want of anything but a commit reached from a served ref ' +
      'answers `ERR upload-pack: not our ref <id>` in the result, as git does. The body may be gzip ' +
      '(`Content-Encoding`), up to `GIT_HTTP_MAX_REQUEST_BYTES` either way.',
  })
  @ApiConsumes(UPLOAD_PACK_REQUEST)
  @ApiBody(BINARY)
  @ApiOkResponse({
    description: 'The upload-pack result, streamed',
    content: { [UPLOAD_PACK_RESULT]: BINARY },
  })
  @ApiErrors(
    'validation_failed',
    'unsupported_media_type',
    'payload_too_large',
    'deployment_not_found',
    'service_unavailable',
    ...FETCH_LIMITS,
  )
  gitUploadPack(
    @CurrentPrincipal() actor: Principal,
    @IdParam('deploymentId') id: number,
    @Req() req: Request,
    @Res() res: Response,
  ): Promise<void> {
    return this.git.uploadPack(actor, id, req, res);
  }

  @Post('git-receive-pack')
  @Audited()
  @StreamedBody(RECEIVE_PACK_REQUEST)
  @GitAccess()
  @ApiOperation({
    summary: 'Git: push (refused)',
    description:
      'Always 403 `git_push_not_supported`: the model changes through dev mode or the command-line upload.',
  })
  @ApiConsumes(RECEIVE_PACK_REQUEST)
  @ApiBody(BINARY)
  @ApiForbiddenResponse({ description: 'Always: pushes are not served' })
  @ApiErrors('deployment_not_found', 'git_push_not_supported')
  gitReceivePack(
    @CurrentPrincipal() actor: Principal,
    @IdParam('deploymentId') id: number,
    @Res() res: Response,
  ): Promise<never> {
    return this.git.refusePush(actor, id, res);
  }
}
