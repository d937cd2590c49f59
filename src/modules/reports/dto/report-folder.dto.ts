import { ApiProperty } from '@nestjs/swagger';
import { PageOf } from '../../../core/http/pagination.js';

/** A folder of the workspace as `GET .../report-folders` lists it, with the reports directly in it. */
export class ReportFolderDto {
  @ApiProperty() id: number;
  @ApiProperty() name: string;
  @ApiProperty({ type: Number, nullable: true, description: 'The containing folder; null at the root' })
  parentId: number | null;
  @ApiProperty({ description: 'Order among its siblings (ascending, ties by id)' }) position: number;
  @ApiProperty({
    description:
      'Reports directly in the folder that the caller can read (not those of its workbooks or sub-folders)',
  })
  reportsCount: number;
}

export class ReportFoldersListDto extends PageOf(ReportFolderDto) {}
