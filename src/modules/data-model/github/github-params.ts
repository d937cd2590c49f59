import { Injectable, Param, type PipeTransform } from '@nestjs/common';
import { ApiParam } from '@nestjs/swagger';
import { coreError } from '../../../core/errors/api-error.js';
import { MAX_GITHUB_ID } from './dto/github.dto.js';
import { isGitHubOwner, isGitHubRepoName } from './github.client.js';

/** A GitHub id in the path: 1 to 2^53-1 (GitHub's ids are 64-bit, unlike our PostgreSQL ids). */
@Injectable()
class GitHubIdPipe implements PipeTransform<string, number> {
  constructor(private readonly name: string) {}

  transform(value: string): number {
    if (!/^[1-9]\d{0,15}$/.test(value) || Number(value) > MAX_GITHUB_ID) {
      throw coreError('validation_failed', [
        `${this.name} must be an integer between 1 and ${MAX_GITHUB_ID}`,
      ]);
    }
    return Number(value);
  }
}

/** An account login or repository name in the path, checked against GitHub's rules for them. */
@Injectable()
class GitHubNamePipe implements PipeTransform<string, string> {
  constructor(
    private readonly name: string,
    private readonly kind: 'owner' | 'repo',
  ) {}

  transform(value: string): string {
    const ok = this.kind === 'owner' ? isGitHubOwner(value) : isGitHubRepoName(value);
    if (!ok) {
      throw coreError('validation_failed', [
        this.kind === 'owner'
          ? `${this.name} must be a GitHub account login`
          : `${this.name} must be a GitHub repository name (letters, digits, '.', '-', '_'; up to 100)`,
      ]);
    }
    return value;
  }
}

function documented(name: string, schema: Record<string, unknown>, pipe: PipeTransform): ParameterDecorator {
  return (target, key, index) => {
    Param(name, pipe)(target, key, index);
    if (key === undefined) return;
    const descriptor = Object.getOwnPropertyDescriptor(target, key);
    if (descriptor) ApiParam({ name, schema })(target, key, descriptor);
  };
}

/** `@GitHubIdParam('installationId') id: number`. */
export const GitHubIdParam = (name: string): ParameterDecorator =>
  documented(name, { type: 'integer', minimum: 1, maximum: MAX_GITHUB_ID }, new GitHubIdPipe(name));

/** `@GitHubNameParam('owner', 'owner') owner: string`, `@GitHubNameParam('repo', 'repo')`. */
export const GitHubNameParam = (name: string, kind: 'owner' | 'repo'): ParameterDecorator =>
  documented(
    name,
    kind === 'owner'
      ? { type: 'string', pattern: '^[A-Za-z0-9][A-Za-z0-9_-]{0,99}$' }
      : { type: 'string', pattern: '^[A-Za-z0-9._-]{1,100}$' },
    new GitHubNamePipe(name, kind),
  );
