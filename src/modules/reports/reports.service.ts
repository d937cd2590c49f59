import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { Principal } from '../../core/auth/principal.js';

/** Reports of a deployment and their placements in spreadsheets. (Being written.) */
@Injectable()
export class ReportsService {
  /**
   * Moves a report into a folder (`null`: the workspace root). Needs ReportEdit plus
   * ReportManage on the report and FolderEdit on the destination. Throws ApiError (404/403/400).
   */
  move(
    _actor: Principal,
    _deploymentId: number,
    _reportId: number,
    _folderId: number | null,
    _manager?: EntityManager,
  ): Promise<{ id: number; type: 'REPORT'; folderId: number | null }> {
    return Promise.reject(new Error('not yet'));
  }

  /** Deletes a report (ReportManage on it). Throws ApiError (404/403). */
  remove(
    _actor: Principal,
    _deploymentId: number,
    _reportId: number,
    _manager?: EntityManager,
  ): Promise<void> {
    return Promise.reject(new Error('not yet'));
  }
}
