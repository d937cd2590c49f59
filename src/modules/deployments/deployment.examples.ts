import { bodyExamples } from '../../core/http/api-body-examples.js';
import { CreateDeploymentDto, UpdateDeploymentDto } from './dto/deployment.dto.js';

export const CREATE_DEPLOYMENT_EXAMPLES = bodyExamples(CreateDeploymentDto, {
  managed: {
    summary: 'A managed deployment on AWS, data model kept in Git',
    value: {
      name: 'Sales analytics',
      cloudProvider: 'aws',
      isManaged: true,
      region: 'aws-us-east-1',
      targetPlatform: 'cubecloud',
      creationStep: 'project',
      creationMethod: 'cubecloud',
      deployMode: 'git',
    },
  },
});

export const UPDATE_DEPLOYMENT_EXAMPLES = bodyExamples(UpdateDeploymentDto, {
  rename: { summary: 'Rename', value: { name: 'Sales analytics (EMEA)' } },
  releaseChannel: {
    summary: 'Pin a release and merge template variables',
    value: {
      releaseChannel: 'release',
      releaseChannelVersionHold: true,
      templateVariables: { CUBEJS_DB_QUERY_TIMEOUT: '10m', CUBEJS_LOG_LEVEL: null },
    },
  },
});
