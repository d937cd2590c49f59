import { applyDecorators } from '@nestjs/common';
import {
  Validate,
  ValidatorConstraint,
  type ValidationArguments,
  type ValidatorConstraintInterface,
} from 'class-validator';
import { coreError } from '../../../core/errors/api-error.js';
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

/**
 * The one branch name of two fields that name the same branch (a query parameter and its body
 * form, or a field and the alias a client sends): whichever is given, or both when they agree.
 * Both given and different is `400 validation_failed`: the request names two branches. Each
 * field has been checked by {@link BranchNameField} already.
 */
export function agreeingBranchName(
  first: readonly [field: string, value: string | null | undefined],
  second: readonly [field: string, value: string | null | undefined],
): string | undefined {
  const [a, x] = first;
  const [b, y] = second;
  if (x != null && y != null && x !== y) {
    throw coreError('validation_failed', [
      `${a} (${JSON.stringify(x)}) and ${b} (${JSON.stringify(y)}) name different branches: ` +
        'send one of them, or the same name in both',
    ]);
  }
  return x ?? y ?? undefined;
}
