import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { GitHubInstallationLink } from './entities/github-installation.entity.js';
import { GitHubDiscoveryService } from './github-discovery.service.js';
import { GitHubInstallationsRepository } from './github-installations.repository.js';
import { GitHubInstallations } from './github-installations.service.js';
import { GitHost, GitHubAppClient } from './github.client.js';
import { GitHubController, GitHubSetupController } from './github.controller.js';

/**
 * The git host: the GitHub App client behind the {@link GitHost} port, the installations each
 * account has linked (`github_installations`, {@link GitHubInstallations}), the link flow's
 * Setup URL and the discovery routes. The data-model module imports it for `GitHost` (connect,
 * push, fetch) and `GitHubInstallations.requireLinked` (connect).
 */
@Module({
  imports: [TypeOrmModule.forFeature([GitHubInstallationLink])],
  controllers: [GitHubController, GitHubSetupController],
  providers: [
    GitHubDiscoveryService,
    GitHubInstallations,
    GitHubInstallationsRepository,
    { provide: GitHost, useClass: GitHubAppClient },
  ],
  exports: [GitHost, GitHubInstallations],
})
export class GitHubModule {}
