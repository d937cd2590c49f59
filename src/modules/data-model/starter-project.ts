/**
 * The small project a new deployment's deploy branch starts with (unless it was created from a
 * git host): one cube that compiles without a database, and a view over it, so the first build
 * and a first `validate` have something real to check.
 */
export const STARTER_FILES: ReadonlyArray<{ path: string; content: string }> = [
  {
    path: 'model/cubes/orders.yml',
    content: `cubes:
  - name: orders
    sql: >
      SELECT 1 AS id, 'completed' AS status, 100 AS amount, CURRENT_DATE AS created_at

    dimensions:
      - name: id
        sql: id
        type: number
        primary_key: true

      - name: status
        sql: status
        type: string

      - name: created_at
        sql: created_at
        type: time

    measures:
      - name: count
        type: count

      - name: total_amount
        sql: amount
        type: sum
`,
  },
  {
    path: 'model/views/orders_view.yml',
    content: `views:
  - name: orders_view
    cubes:
      - join_path: orders
        includes:
          - status
          - created_at
          - count
          - total_amount
`,
  },
  {
    path: 'README.md',
    content: `# Data model

Cubes live in \`model/cubes\`, views in \`model/views\`. Edit them in dev mode
(\`POST /build/api/v1/deployments/{id}/dev-mode\`), validate, commit and merge.
`,
  },
];
