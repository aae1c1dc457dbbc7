package catalog

import (
	"context"
	"encoding/json"
	"fmt"
)

// ReportMetrics implements Catalog.
func (s *Service) ReportMetrics(ctx context.Context, wh string, id Ident, body []byte) error {
	var rep map[string]json.RawMessage
	if err := json.Unmarshal(body, &rep); err != nil || rep == nil {
		return fmt.Errorf("%w: metrics report is not a JSON object", ErrBadRequest)
	}
	var typ string
	if err := json.Unmarshal(rep["report-type"], &typ); err != nil || typ == "" {
		return fmt.Errorf("%w: metrics report without report-type", ErrBadRequest)
	}
	if _, _, err := s.loadPointer(ctx, wh, KindTable, id); err != nil {
		return err
	}
	s.log.Info().Str("warehouse", wh).Stringer("ident", id).Str("report-type", typ).
		RawJSON("report", body).Msg("iceberg metrics report")
	return nil
}
