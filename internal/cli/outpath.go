package cli

import (
	"os"
	"path/filepath"
)

// checkOutputFile checks, before a run of minutes, that file (a flag's
// value, flag naming it) can be written where it is: not a directory,
// in a directory that exists. The run otherwise ended writing it, its
// results lost.
func checkOutputFile(flag, file string) error {
	if file == "" {
		return nil
	}
	if st, err := os.Stat(file); err == nil && st.IsDir() {
		return badf("%s %s: a directory, want a file to write", flag, file)
	}
	dir := filepath.Dir(file)
	st, err := os.Stat(dir)
	if err != nil {
		return badf("%s %s: its directory: %v", flag, file, err)
	}
	if !st.IsDir() {
		return badf("%s %s: %s is not a directory", flag, file, dir)
	}
	return nil
}

// checkOutputDir is checkOutputFile for a directory the run writes into
// (and makes, as scheduler_perf does, with its parents): it, or the
// nearest of its parents that exists, must be a directory.
func checkOutputDir(flag, dir string) error {
	if dir == "" {
		return nil
	}
	for d := dir; ; d = filepath.Dir(d) {
		st, err := os.Stat(d)
		if err == nil {
			if !st.IsDir() {
				return badf("%s %s: %s is not a directory", flag, dir, d)
			}
			return nil
		}
		if filepath.Dir(d) == d {
			return badf("%s %s: %v", flag, dir, err)
		}
	}
}
