import { ApiProperty } from '@nestjs/swagger';

/** The owner of a workspace item. */
export class ResourceOwnerDto {
  @ApiProperty() id: number;
  @ApiProperty() email: string;
  @ApiProperty({ type: String, nullable: true }) firstName: string | null;
  @ApiProperty({ type: String, nullable: true }) picture: string | null;
}

/** One folder of the chain above an item, root first. */
export class WorkspaceFolderPathEntryDto {
  @ApiProperty() id: number;
  @ApiProperty() name: string;
}
