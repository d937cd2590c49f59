import { STARTER_FILES } from '../../src/modules/data-model/starter-project.js';

const starter = (path: string) => STARTER_FILES.find((f) => f.path === path)!.content;

/**
 * The starter project's model files (src/modules/data-model/starter-project.ts) with the measure
 * `orders.count` renamed to `orders.order_count`, in the cube and in the view that includes it:
 * the change the model-review tests review.
 */
export const STARTER_COUNT_RENAMED = [
  {
    path: 'model/cubes/orders.yml',
    content: starter('model/cubes/orders.yml').replace('- name: count\n', '- name: order_count\n'),
  },
  {
    path: 'model/views/orders_view.yml',
    content: starter('model/views/orders_view.yml').replace('- count\n', '- order_count\n'),
  },
];
