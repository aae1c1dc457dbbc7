package drive_test

import (
	"testing"

	"github.com/cairnstore/cairn/objstore/drive"
	"github.com/cairnstore/cairn/objstore/drive/drivetest"
)

func TestDirConformance(t *testing.T) {
	drivetest.Run(t, func(t *testing.T) drive.Drive {
		d, _, err := drive.OpenDir(t.TempDir(), "conformance", 2)
		if err != nil {
			t.Fatal(err)
		}
		return d
	})
}
