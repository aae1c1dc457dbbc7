package main

import (
	"fmt"
	"io"
	"time"

	"github.com/rs/zerolog"
)

// parseLevel accepts the --log-level words.
func parseLevel(s string) (zerolog.Level, error) {
	switch s {
	case "debug":
		return zerolog.DebugLevel, nil
	case "info", "":
		return zerolog.InfoLevel, nil
	case "warn":
		return zerolog.WarnLevel, nil
	case "error":
		return zerolog.ErrorLevel, nil
	default:
		return zerolog.NoLevel, fmt.Errorf("unknown log level %q (want debug, info, warn or error)", s)
	}
}

// newLogger logs JSON lines to w, or coloured console lines when w is a
// terminal. The level is set on the logger itself, never globally.
func newLogger(w io.Writer, tty bool, level zerolog.Level) zerolog.Logger {
	if tty {
		w = zerolog.ConsoleWriter{Out: w, TimeFormat: time.TimeOnly}
	}
	return zerolog.New(w).Level(level).With().Timestamp().Logger()
}
