package catalog

import "context"

// enter passes the cutover gate (Options.Gate) for a write to the given
// warehouses ("" is the warehouse registry), in order. The returned
// release must be called when the write is done; on error nothing is held.
// Only the exported write methods enter, once each, so the gate's shared
// locks are never taken twice by one operation.
func (s *Service) enter(ctx context.Context, whs ...string) (func(), error) {
	g := s.opt.Gate
	if g == nil {
		return func() {}, nil
	}
	var held []func()
	release := func() {
		for i := len(held) - 1; i >= 0; i-- {
			held[i]()
		}
	}
	for _, wh := range whs {
		r, err := g.Enter(ctx, wh)
		if err != nil {
			release()
			return nil, err
		}
		held = append(held, r)
	}
	return release, nil
}
