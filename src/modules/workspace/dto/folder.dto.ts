import { ApiProperty } from '@nestjs/swagger';
import { PageOf, PageQueryDto } from '../../../core/http/pagination.js';
import { IntField, StringField } from '../../../core/http/validation.js';
import { ResourceOwnerDto, WorkspaceFolderPathEntryDto } from './shared.dto.js';

export class FoldersQueryDto extends PageQueryDto {
  @IntField({
    optional: true,
    query: true,
    min: 0,
    description: 'List the direct sub-folders of this folder; omitted (or 0): the folders at the root',
  })
  parentId?: number;
}

export class CreateFolderDto {
  @StringField({ minLength: 1, maxLength: 255, example: 'Sales', description: 'Trimmed; not blank' })
  name: string;

  @IntField({
    optional: true,
    nullable: true,
    min: 1,
    description: 'The folder to create it in (edit access needed there); null or omitted: the root',
  })
  parentId?: number | null;

  @IntField({
    optional: true,
    nullable: true,
    description: 'Order among its siblings; omitted: after the last one',
  })
  position?: number | null;
}

export class UpdateFolderDto {
  @StringField({
    optional: true,
    nullable: true,
    minLength: 1,
    maxLength: 255,
    description: 'Trimmed; not blank. Null or omitted: unchanged',
  })
  name?: string | null;

  @IntField({ optional: true, nullable: true, description: 'Null or omitted: unchanged' })
  position?: number | null;
}

export class FolderDto {
  @ApiProperty() id: number;
  @ApiProperty() name: string;
  @ApiProperty({ description: 'Order among its siblings (ascending, ties by id)' }) position: number;
  @ApiProperty({ type: Number, nullable: true, description: 'The containing folder; null at the root' })
  parentId: number | null;
  @ApiProperty() deploymentId: number;
  @ApiProperty({ type: String, format: 'date-time' }) createdAt: string;
  @ApiProperty({ type: String, format: 'date-time' }) updatedAt: string;
  @ApiProperty() createdBy: number;
  @ApiProperty({ type: Number, nullable: true }) updatedBy: number | null;
  @ApiProperty({ enum: ['FOLDER'] }) type: 'FOLDER';
  @ApiProperty({ type: ResourceOwnerDto, nullable: true, description: 'The owner' })
  user: ResourceOwnerDto | null;
  @ApiProperty({
    type: [WorkspaceFolderPathEntryDto],
    description:
      'The path of the containing folder, as on every workspace item: the folders above this one, ' +
      'root first, the folder itself excluded (`[]` at the root)',
  })
  folderPath: WorkspaceFolderPathEntryDto[];
}

export class FoldersListDto extends PageOf(FolderDto, {
  legacy: 'offset',
  nullablePageInfo: true,
  count: { description: 'Folders of this level the caller can read' },
}) {}
