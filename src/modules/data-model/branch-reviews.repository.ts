import { Injectable } from '@nestjs/common';
import { Database } from '../../core/database/database.js';
import { isoSql } from '../../core/database/sql.js';
import { keysetPredicate, type CursorValue } from '../../core/http/pagination.js';
import { userJoin } from '../users/users.fragments.js';
import type { ReviewVerdict } from './dto/reviews.dto.js';

/** A review as stored, with its reviewer's email as it is now. */
export interface ReviewRow {
  id: number;
  branchName: string;
  headCommit: string;
  reviewerUserId: number;
  reviewerEmail: string;
  verdict: ReviewVerdict;
  comment: string | null;
  createdAt: string;
}

export interface NewReview {
  accountId: number;
  deploymentId: number;
  branchId: number;
  branchName: string;
  headCommit: string;
  reviewerUserId: number;
  verdict: ReviewVerdict;
  comment: string | null;
}

/** The current reviews of one branch at its head: who approved, and how many requested changes. */
export interface ReviewCounts {
  branchName: string;
  approverIds: number[];
  changesRequested: number;
}

const COLUMNS = `r.id, r.branch_name AS "branchName", r.head_commit AS "headCommit",
  r.reviewer_user_id AS "reviewerUserId", u.email AS "reviewerEmail", r.verdict, r.comment,
  ${isoSql('r.created_at')} AS "createdAt"`;

/** All SQL on `model_reviews` (reviews of a branch's head, docs/data-model.md "Reviews and the merge gate"). */
@Injectable()
export class BranchReviewsRepository {
  constructor(private readonly db: Database) {}

  /**
   * Records a review, replacing the reviewer's review of the same branch head: the new review takes
   * a new id, so ids order reviews by when they were given. One statement: parallel reviews of one
   * reviewer and head leave one row, the last written.
   */
  async upsert(review: NewReview): Promise<ReviewRow> {
    const row = await this.db.one<ReviewRow>(
      `WITH r AS (
         INSERT INTO model_reviews (account_id, deployment_id, branch_id, branch_name, head_commit,
           reviewer_user_id, verdict, comment)
         VALUES (:accountId, :deploymentId, :branchId, :branchName, :headCommit, :reviewerUserId, :verdict, :comment)
         ON CONFLICT (branch_id, head_commit, reviewer_user_id) DO UPDATE
           SET id = nextval(pg_get_serial_sequence('model_reviews', 'id')), verdict = EXCLUDED.verdict,
             comment = EXCLUDED.comment, created_at = now()
         RETURNING *
       )
       SELECT ${COLUMNS} FROM r ${userJoin('r.reviewer_user_id', 'u', 'INNER')}`,
      { ...review },
    );
    return row!;
  }

  /** A page of a branch's reviews, newest first, after the review id `afterId`. */
  page(branchId: number, after: CursorValue[] | null, limit: number): Promise<ReviewRow[]> {
    const keyset = keysetPredicate(['r.id'], 'DESC', after);
    return this.db.query<ReviewRow>(
      `SELECT ${COLUMNS} FROM model_reviews r ${userJoin('r.reviewer_user_id', 'u', 'INNER')}
       WHERE r.branch_id = :branchId AND ${keyset.sql}
       ORDER BY r.id DESC LIMIT :limit`,
      { branchId, ...keyset.params, limit },
    );
  }

  /** The reviews of a branch's row at one head commit (the current ones while it is the head), by id. */
  atHead(branchId: number, headCommit: string): Promise<ReviewRow[]> {
    return this.db.query<ReviewRow>(
      `SELECT ${COLUMNS} FROM model_reviews r ${userJoin('r.reviewer_user_id', 'u', 'INNER')}
       WHERE r.branch_id = :branchId AND r.head_commit = :headCommit ORDER BY r.id`,
      { branchId, headCommit },
    );
  }

  /**
   * For each of `branches` (name and current head) of the deployment that has current reviews:
   * the approvers and the count of change requests at that head. One query for a page of branches.
   */
  counts(
    deploymentId: number,
    branches: ReadonlyArray<{ name: string; head: string }>,
  ): Promise<ReviewCounts[]> {
    if (branches.length === 0) return Promise.resolve([]);
    return this.db.query<ReviewCounts>(
      `SELECT b.name AS "branchName",
              COALESCE(array_agg(r.reviewer_user_id ORDER BY r.reviewer_user_id)
                FILTER (WHERE r.verdict = 'approve'), '{}') AS "approverIds",
              (count(*) FILTER (WHERE r.verdict = 'request_changes'))::int AS "changesRequested"
       FROM unnest(:names::text[], :heads::text[]) AS b(name, head)
       JOIN model_branches mb ON mb.deployment_id = :deploymentId AND mb.name = b.name
       JOIN model_reviews r ON r.branch_id = mb.id AND r.head_commit = b.head
       GROUP BY b.name`,
      { deploymentId, names: branches.map((b) => b.name), heads: branches.map((b) => b.head) },
    );
  }
}
