import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import type { ImpactItem, ImpactReason } from '../content-impact.port.js';

const REASONS: ImpactReason[] = ['member_removed', 'member_renamed', 'type_changed', 'member_hidden'];

/** One stored item a model change would break (issue 33: `impact` of the diff and of validate). */
export class ImpactItemDto implements ImpactItem {
  @ApiProperty({ enum: ['report', 'dashboard', 'notification'] }) type: ImpactItem['type'];
  @ApiProperty() id: number;
  @ApiProperty() name: string;
  @ApiProperty({ example: 'orders.count', description: 'The member as the item names it' }) member: string;
  @ApiProperty({ enum: REASONS }) reason: ImpactReason;
  @ApiPropertyOptional({ example: 'orders.order_count', description: 'For `member_renamed`: the new path' })
  renamedTo?: string;
  @ApiProperty({ type: [String], description: 'The embed tenants that see the item, by name' })
  tenants: string[];
}
