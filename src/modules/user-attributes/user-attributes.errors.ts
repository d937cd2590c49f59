import { errorsOf } from '../../core/errors/api-error.js';

export const userAttributesError = errorsOf(
  'user_attribute_not_found',
  'user_attribute_name_taken',
  'attribute_type_immutable',
  'invalid_default_value',
  'invalid_attribute_value',
);

export const attributeNotFound = (id: number) =>
  userAttributesError('user_attribute_not_found', `User attribute ${id} was not found`);
