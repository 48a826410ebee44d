package seriesdb

import (
	"context"
	"database/sql"
)

// txStmts is a transaction whose statements are prepared once each, on
// first use, and reused: the series' update runs the same few statements
// for every series of a batch (250 devices' results: a thousand
// statements), and preparing each again cost a sixth of the ingest.
// Close closes them; the transaction stays the caller's.
type txStmts struct {
	tx    *sql.Tx
	stmts map[string]*sql.Stmt
}

func newTxStmts(tx *sql.Tx) *txStmts { return &txStmts{tx: tx, stmts: map[string]*sql.Stmt{}} }

func (t *txStmts) stmt(ctx context.Context, query string) (*sql.Stmt, error) {
	if st, ok := t.stmts[query]; ok {
		return st, nil
	}
	st, err := t.tx.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	t.stmts[query] = st
	return st, nil
}

// ExecContext runs query, prepared once.
func (t *txStmts) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	st, err := t.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	return st.ExecContext(ctx, args...)
}

// QueryContext runs query, prepared once.
func (t *txStmts) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	st, err := t.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	return st.QueryContext(ctx, args...)
}

// QueryRowContext runs query, prepared once; a failed preparation is
// the row's error (the transaction's own QueryRowContext, which reports
// it so).
func (t *txStmts) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	st, err := t.stmt(ctx, query)
	if err != nil {
		return t.tx.QueryRowContext(ctx, query, args...)
	}
	return st.QueryRowContext(ctx, args...)
}

// Close closes the statements prepared.
func (t *txStmts) Close() {
	for _, st := range t.stmts {
		st.Close()
	}
}
