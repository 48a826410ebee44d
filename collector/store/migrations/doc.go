// Package migrations holds the schema of each of the store's engines, the
// numbered SQL files of sqlite/ and postgres/, read in order (Of) for
// sqldb to apply. A file is appended, never edited.
package migrations
