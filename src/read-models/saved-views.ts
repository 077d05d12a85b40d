import type { Queryable } from '../db/connection.js';

/** A saved view as stored (table saved_views). */
export interface SavedView {
  id: number;
  name: string;
  path: string;
  /** Account key of who saved it. */
  owner: string;
  shared: boolean;
  createdAt: Date;
  updatedAt: Date;
}

type ViewRow = {
  id: string | number;
  name: string;
  path: string;
  owner: string;
  shared: boolean;
  created_at: Date | string;
  updated_at: Date | string;
};

const COLUMNS = 'id, name, path, owner, shared, created_at, updated_at';

function viewOf(r: ViewRow): SavedView {
  return { id: Number(r.id), name: r.name, path: r.path, owner: r.owner, shared: r.shared, createdAt: new Date(r.created_at), updatedAt: new Date(r.updated_at) };
}

/** One view by id, whoever owns it (callers decide who may see it). */
export async function savedView(q: Queryable, id: number, options: { forUpdate?: boolean } = {}): Promise<SavedView | null> {
  const rows = await q.query<ViewRow>(`select ${COLUMNS} from saved_views where id = $1${options.forUpdate ? ' for update' : ''}`, [id]);
  return rows[0] ? viewOf(rows[0]) : null;
}

/** The views `owner` may see: their own and every shared one; their own first, then by name. */
export async function visibleViews(q: Queryable, owner: string, limit = 1000): Promise<SavedView[]> {
  const rows = await q.query<ViewRow>(
    `select ${COLUMNS} from saved_views where owner = $1 or shared
     order by (owner = $1) desc, lower(name), owner, id limit $2`,
    [owner, limit],
  );
  return rows.map(viewOf);
}
