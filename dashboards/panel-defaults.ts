/**
 * Legend and tooltip settings shared by warpwatch panels. The SDK's defaults hide the
 * legend, which leaves multi-stream panels unreadable; every series is named here.
 */
import {
  LegendDisplayMode,
  LegendPlacement,
  SortOrder,
  TooltipDisplayMode,
  VizLegendOptionsBuilder,
  VizTooltipOptionsBuilder,
} from '@grafana/grafana-foundation-sdk/common';

/**
 * A visible legend below the plot listing each series with its last value.
 *
 * @example
 * new TimeseriesPanelBuilder().legend(visibleLegend());
 */
export function visibleLegend(): VizLegendOptionsBuilder {
  return new VizLegendOptionsBuilder()
    .showLegend(true)
    .displayMode(LegendDisplayMode.List)
    .placement(LegendPlacement.Bottom)
    .calcs(['lastNotNull']);
}

/**
 * A tooltip showing all series at the hovered time, highest first.
 *
 * @example
 * new TimeseriesPanelBuilder().tooltip(allSeriesTooltip());
 */
export function allSeriesTooltip(): VizTooltipOptionsBuilder {
  return new VizTooltipOptionsBuilder().mode(TooltipDisplayMode.Multi).sort(SortOrder.Descending);
}
