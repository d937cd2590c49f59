import { Injectable } from '@nestjs/common';
import { AccessService } from '../../core/auth/access.service.js';
import { Action } from '../../core/auth/action.js';
import type { Principal } from '../../core/auth/principal.js';
import {
  buildPage,
  fetchLimit,
  resolvePaging,
  type Page,
  type PageQueryDto,
} from '../../core/http/pagination.js';
import { DeploymentsService } from '../deployments/deployments.service.js';
import { folderChainSql } from '../workspace/workspace.fragments.js';
import type { ReportFolderDto } from './dto/report-folder.dto.js';
import { ReportFoldersRepository } from './report-folders.repository.js';

/**
 * Report folders, as the command-line tool lists them (docs/command-line-tool.md): reports live in
 * the workspace's folders, so these are the folders of the deployment, every level, that the
 * caller can read, each with the number of readable reports directly in it.
 */
@Injectable()
export class ReportFoldersService {
  constructor(
    private readonly access: AccessService,
    private readonly deployments: DeploymentsService,
    private readonly repository: ReportFoldersRepository,
  ) {}

  async list(actor: Principal, deploymentId: number, query: PageQueryDto): Promise<Page<ReportFolderDto>> {
    await this.deployments.requireInAccount(actor.accountId, deploymentId);
    const paging = resolvePaging(query, ['number']);
    const afterId = paging.mode === 'cursor' && paging.after ? (paging.after[0] as number) : null;
    const rows = await this.repository.list({
      accountId: actor.accountId,
      deploymentId,
      folderScope: this.access.contentScopeSql(
        actor,
        'Folder',
        Action.FolderRead,
        { id: 'f.id', owner: 'f.user_id', folderChain: folderChainSql('f') },
        'fscope',
      ),
      reportScope: this.access.contentScopeSql(
        actor,
        'Report',
        Action.ReportRead,
        { id: 'r.id', owner: 'r.user_id', workbookId: 'r.workbook_id', folderChain: folderChainSql('f') },
        'rscope',
      ),
      afterId,
      limit: fetchLimit(paging),
    });
    return buildPage(rows, paging, (r) => [r.id]);
  }
}
