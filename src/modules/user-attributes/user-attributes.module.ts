import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { UserAttributeValue } from './entities/user-attribute-value.entity.js';
import { UserAttribute } from './entities/user-attribute.entity.js';
import { UserAttributeValuesController } from './user-attribute-values.controller.js';
import { UserAttributeValuesService } from './user-attribute-values.service.js';
import { UserAttributesController } from './user-attributes.controller.js';
import { UserAttributesRepository } from './user-attributes.repository.js';
import { UserAttributesService } from './user-attributes.service.js';

/** Typed user attributes of an account and their per-user values. */
@Module({
  imports: [TypeOrmModule.forFeature([UserAttribute, UserAttributeValue])],
  controllers: [UserAttributesController, UserAttributeValuesController],
  providers: [UserAttributesRepository, UserAttributesService, UserAttributeValuesService],
  exports: [UserAttributeValuesService, UserAttributesService],
})
export class UserAttributesModule {}
