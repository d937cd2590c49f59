import { Body, Controller, Get, HttpCode, Post, Query, UseFilters } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Audited } from '../../core/audit/audited.decorator.js';
import { Action } from '../../core/auth/action.js';
import { CurrentPrincipal, RequireObjectAction } from '../../core/auth/access.decorators.js';
import type { Principal } from '../../core/auth/principal.js';
import { IdParam } from '../../core/http/id.pipe.js';
import type { Page } from '../../core/http/pagination.js';
import { ApiErrors } from '../../core/openapi/api-errors.decorator.js';
import { DeploymentScopeFilter } from '../deployments/deployment-scope.filter.js';
import { BranchReviews } from './branch-reviews.service.js';
import { DATA_MODEL_ROUTES } from './data-model.routes.js';
import { CreateReviewDto, ReviewDto, ReviewsListDto, ReviewsQueryDto } from './dto/reviews.dto.js';

/** Reviews of a branch before it is merged into the deploy branch (the merge gate counts them). */
@ApiTags('Data Model')
@UseFilters(DeploymentScopeFilter)
@Controller(DATA_MODEL_ROUTES)
export class ReviewsController {
  constructor(private readonly reviews: BranchReviews) {}

  @Post('branches/reviews')
  @Audited()
  @HttpCode(200)
  @RequireObjectAction(Action.SchemaUpdate)
  @ApiOperation({
    summary: 'Review a branch at its head: approve or request changes',
    description:
      'Records your review of the branch’s current head, with an optional comment (at most 10,000 characters). ' +
      'Your earlier review of the same head is replaced; a move of the head (a commit, a merge into it, a pull, ' +
      'an upload) dismisses it. The deploy branch is not reviewed (`deploy_branch_protected`), and an author of ' +
      'a commit of the change (a commit of the branch the deploy branch does not have) may not review it ' +
      '(`cannot_review_own_change`). The merge gate of the deploy branch counts current approvals.',
  })
  @ApiOkResponse({ type: ReviewDto })
  @ApiErrors(
    'validation_failed',
    'deployment_not_found',
    'branch_not_found',
    'invalid_branch_name',
    'deploy_branch_protected',
    'cannot_review_own_change',
  )
  createBranchReview(
    @CurrentPrincipal() actor: Principal,
    @IdParam('deploymentId') id: number,
    @Body() dto: CreateReviewDto,
  ): Promise<ReviewDto> {
    return this.reviews.record(actor, id, dto);
  }

  @Get('branches/reviews')
  @RequireObjectAction(Action.SchemaRead)
  @ApiOperation({
    summary: 'List the reviews of a branch',
    description:
      'Every review of the branch, newest first, with cursor paging. `dismissed` is true for a review of another ' +
      'head than the branch’s current one: it no longer counts.',
  })
  @ApiOkResponse({ type: ReviewsListDto })
  @ApiErrors(
    'validation_failed',
    'invalid_cursor',
    'deployment_not_found',
    'branch_not_found',
    'invalid_branch_name',
  )
  listBranchReviews(
    @CurrentPrincipal() actor: Principal,
    @IdParam('deploymentId') id: number,
    @Query() query: ReviewsQueryDto,
  ): Promise<Page<ReviewDto>> {
    return this.reviews.list(actor, id, query);
  }
}
