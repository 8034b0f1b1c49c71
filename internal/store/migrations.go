package store

import "io/fs"

// SubFS returns the subtree dir of fsys; it panics on a bad name, which is a
// programming error caught by any test.
func SubFS(fsys fs.FS, dir string) fs.FS {
	sub, err := fs.Sub(fsys, dir)
	if err != nil {
		panic(err)
	}
	return sub
}
