package peer

import (
	"testing"
	"time"

	"github.com/cairnstore/cairn/objstore/drive"
	"github.com/cairnstore/cairn/objstore/drive/drivetest"
)

// TestConformance runs the drive suite on a Drive over loopback HTTP to a
// Server of a real Dir.
func TestConformance(t *testing.T) {
	drivetest.Run(t, func(t *testing.T) drive.Drive {
		return newFixture(t, 20*time.Second).drive
	})
}
