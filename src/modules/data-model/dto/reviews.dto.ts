import { ApiProperty } from '@nestjs/swagger';
import { PageOf, PageQueryDto } from '../../../core/http/pagination.js';
import { EnumField, StringField } from '../../../core/http/validation.js';
import { BranchNameField } from './branch-name.js';

export const REVIEW_VERDICTS = ['approve', 'request_changes'] as const;
export type ReviewVerdict = (typeof REVIEW_VERDICTS)[number];

/** The longest review comment, in characters. */
export const MAX_REVIEW_COMMENT = 10_000;

export class CreateReviewDto {
  @BranchNameField({ description: 'The branch reviewed, at its current head' }) branchName: string;

  @EnumField(REVIEW_VERDICTS, { enumName: 'ReviewVerdict' }) verdict: ReviewVerdict;

  @StringField({
    optional: true,
    nullable: true,
    maxLength: MAX_REVIEW_COMMENT,
    example: 'The rename breaks the Orders report; fix it first',
  })
  comment?: string | null;
}

export class ReviewsQueryDto extends PageQueryDto {
  @BranchNameField({ description: 'The branch whose reviews are listed' }) branchName: string;
}

export class ReviewerDto {
  @ApiProperty() id: number;
  @ApiProperty({ example: 'ana@acme.test' }) email: string;
}

export class ReviewDto {
  @ApiProperty() id: number;
  @ApiProperty({ example: 'feature/orders' }) branchName: string;
  @ApiProperty({ description: 'The head commit of the branch the review was given on' }) headCommit: string;
  @ApiProperty({ type: ReviewerDto }) reviewer: ReviewerDto;
  @ApiProperty({ enum: REVIEW_VERDICTS, enumName: 'ReviewVerdict' }) verdict: ReviewVerdict;
  @ApiProperty({ type: String, nullable: true }) comment: string | null;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({
    description:
      'The branch head moved since the review (a commit, a merge into it, a pull, an upload): it no longer ' +
      'counts for the merge gate',
  })
  dismissed: boolean;
}

export class ReviewsListDto extends PageOf(ReviewDto) {}
