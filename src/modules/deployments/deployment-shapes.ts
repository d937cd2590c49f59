import type { DeploymentListRow, DeploymentRow } from './deployments.repository.js';
import type { DeploymentDto, DeploymentSettingsDto } from './dto/deployment.dto.js';
import { imageTag } from './release-version.js';

/** The version a deployment runs: the one it holds, else the head of its channel. */
export function effectiveVersion(
  row: Pick<DeploymentRow, 'releaseChannelVersion' | 'releaseChannelVersionHold' | 'channelHead'>,
): string | null {
  return row.releaseChannelVersionHold && row.releaseChannelVersion
    ? row.releaseChannelVersion
    : row.channelHead;
}

/** The `Deployment` shape of a row; `domain` is `DEPLOYMENT_DOMAIN`. */
export function deploymentShape(
  row: Pick<DeploymentListRow, 'id' | 'name' | 'creationStep'>,
  domain: string,
): DeploymentDto {
  return {
    id: row.id,
    name: row.name,
    deploymentUrl: `https://deployment-${row.id}.${domain}`,
    creationStep: row.creationStep,
  };
}

/**
 * The settings payload (`GET .../settings`). `releaseChannelVersion` is the version the
 * deployment runs (the one it holds, else its channel's head) and `cubeImageVersion` that
 * version's image tag.
 */
export function settingsShape(row: DeploymentRow, domain: string): DeploymentSettingsDto {
  const version = effectiveVersion(row);
  return {
    ...deploymentShape(row, domain),
    cloudProvider: row.cloudProvider,
    region: row.region,
    creationMethod: row.creationMethod,
    deployMode: row.deployMode,
    isManaged: row.isManaged,
    targetPlatform: row.targetPlatform,
    releaseChannel: row.releaseChannel,
    releaseChannelVersion: version,
    releaseChannelVersionHold: row.releaseChannelVersionHold,
    cubeImageVersion: version === null ? null : imageTag(version),
    template: row.template,
    templateVariables: row.templateVariables,
    defaultLaunchpadViewGroup: row.defaultLaunchpadViewGroup,
    launchpadTabs: row.launchpadTabs,
    customDomain: row.customDomain,
    deployBranchName: row.deployBranchName,
    deployBranchReadOnly: row.deployBranchReadOnly,
    deployBranchMergeAllowed: row.deployBranchMergeAllowed,
    deployBranchRequiredApprovals: row.deployBranchRequiredApprovals,
    deployBranchBlockNewBrokenContent: row.deployBranchBlockNewBrokenContent,
    deployProjectRoot: row.deployProjectRoot,
    isCubeSqlEnabled: true,
    isSupportPreAggregations: true,
  };
}
