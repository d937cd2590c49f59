import { HttpStatus } from '@nestjs/common';
import { defineErrors } from '../../core/http/api-error.js';

export const userAttributesError = defineErrors({
  user_attribute_not_found: HttpStatus.NOT_FOUND,
  user_attribute_name_taken: HttpStatus.CONFLICT,
  attribute_type_immutable: HttpStatus.BAD_REQUEST,
  invalid_default_value: HttpStatus.BAD_REQUEST,
  invalid_attribute_value: HttpStatus.BAD_REQUEST,
  user_not_found: HttpStatus.NOT_FOUND,
});

export const attributeNotFound = (id: number) =>
  userAttributesError('user_attribute_not_found', `User attribute ${id} was not found`);
