import { applyDecorators } from '@nestjs/common';
import {
  Validate,
  ValidatorConstraint,
  type ValidationArguments,
  type ValidatorConstraintInterface,
} from 'class-validator';
import { StringField } from '../../../core/http/validation.js';
import {
  branchNameProblem,
  branchNameRuleProblem,
  isDevBranchName,
  MAX_BRANCH_NAME,
  type BranchNameOptions,
} from '../git/branch-names.js';

// Other modules (dbt sync) take the rule from here, with the decorator: the DTO is their way in.
export { branchNameProblem, isDevBranchName };

@ValidatorConstraint({ name: 'isBranchName', async: true })
class BranchNameRule implements ValidatorConstraintInterface {
  async validate(value: unknown, args: ValidationArguments): Promise<boolean> {
    // Not a string: IsString says so, as `validation_failed`.
    if (typeof value !== 'string') return true;
    return (await branchNameProblem(value, args.constraints[0] as BranchNameOptions)) === null;
  }

  defaultMessage(args: ValidationArguments): string {
    const value = typeof args.value === 'string' ? args.value : '';
    const problem =
      branchNameRuleProblem(value, args.constraints[0] as BranchNameOptions) ??
      'is not a valid git branch name (git check-ref-format --branch)';
    return `$property ${problem}`;
  }
}

/**
 * A branch name field: a string checked by the one branch-name rule (`git/branch-names.ts`); a
 * name that breaks it is 400 `invalid_branch_name`. `isNew` for a name given to a new branch.
 */
export function BranchNameField(
  opts: {
    description?: string;
    example?: string;
    optional?: boolean;
    nullable?: boolean;
    minLength?: number;
    isNew?: boolean;
  } = {},
): PropertyDecorator {
  const { isNew = false, ...field } = opts;
  return applyDecorators(
    StringField({ example: 'feature/orders', ...field, maxLength: MAX_BRANCH_NAME }),
    Validate(BranchNameRule, [{ isNew }], { context: { code: 'invalid_branch_name' } }),
  );
}
