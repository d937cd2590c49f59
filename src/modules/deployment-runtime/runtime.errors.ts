import { errorsOf } from '../../core/errors/api-error.js';

/**
 * What the runtime routes answer besides `notFound('Deployment' | 'Pod')`: a runtime out of reach,
 * overloaded or too slow (503), one that refuses our credentials or fails (502), and a query the
 * pods cannot serve (400: a container the named pod does not have).
 */
export const runtimeError = errorsOf('runtime_unavailable', 'runtime_failed', 'validation_failed');
