// The report's interactivity: hover tooltips from each drawn value's data-tip, and x-axis zoom
// (drag across a chart; double-click resets). Zooming stretches the plot group and redraws the
// x ticks and phase labels from the range the chart carries (data-x0/x1, data-px0/px1).
(function () {
  "use strict";
  var NS = "http://www.w3.org/2000/svg";
  var tip = document.getElementById("tip");
  document.addEventListener("mouseover", function (event) {
    var target = event.target.closest ? event.target.closest("[data-tip]") : null;
    if (target) {
      tip.textContent = target.getAttribute("data-tip");
      tip.style.display = "block";
    } else {
      tip.style.display = "none";
    }
  });
  document.addEventListener("mousemove", function (event) {
    tip.style.left = event.pageX + 12 + "px";
    tip.style.top = event.pageY + 12 + "px";
  });

  function niceTicks(low, high, wanted) {
    if (!(high > low)) return [low];
    var raw = (high - low) / wanted;
    var power = Math.pow(10, Math.floor(Math.log10(raw)));
    var step = [1, 2, 5, 10].map(function (m) { return m * power; }).find(function (s) { return (high - low) / s <= wanted * 1.5; }) || 10 * power;
    var ticks = [];
    for (var i = Math.ceil(low / step); i <= Math.floor(high / step); i++) ticks.push(i * step);
    return ticks;
  }

  function shortNumber(value) {
    var magnitude = Math.abs(value);
    if (magnitude >= 1e6) return +(value / 1e6).toPrecision(3) + "M";
    if (magnitude >= 1e4) return +(value / 1e3).toPrecision(3) + "k";
    return String(+value.toPrecision(3));
  }

  // Labels with the decimals the ticks' step needs (as chart.rs's tick_labels).
  function tickLabels(ticks) {
    if (ticks.length < 2) return ticks.map(shortNumber);
    var step = Math.abs(ticks[1] - ticks[0]);
    var largest = ticks.reduce(function (m, t) { return Math.max(m, Math.abs(t)); }, 0);
    var scale = 1, unit = "";
    if (largest >= 1e6 && step >= 1e5) { scale = 1e6; unit = "M"; }
    else if (largest >= 1e4 && step >= 100) { scale = 1e3; unit = "k"; }
    var decimals = step > 0 ? Math.max(0, Math.ceil(-Math.log10(step / scale) - 1e-9)) : 0;
    return ticks.map(function (t) {
      var value = t / scale;
      if (Math.abs(value) < 0.5 * Math.pow(10, -decimals)) value = 0;
      return value.toFixed(Math.min(decimals, 20)) + unit;
    });
  }

  function zoomable(svg) {
    var ticks = svg.querySelector("g.xticks");
    var plot = svg.querySelector("g.plot");
    if (!ticks || !plot) return;
    var x0 = +ticks.dataset.x0, x1 = +ticks.dataset.x1;
    var p0 = +ticks.dataset.px0, p1 = +ticks.dataset.px1, tickY = +ticks.dataset.y;
    var view = [x0, x1];
    var dragFrom = null;
    var band = document.createElementNS(NS, "rect");
    band.setAttribute("fill", "rgba(31,119,180,0.15)");
    band.setAttribute("y", 52);
    band.setAttribute("height", svg.viewBox.baseVal.height - 98);
    band.style.display = "none";
    svg.appendChild(band);

    function svgX(event) {
      var point = svg.createSVGPoint();
      point.x = event.clientX;
      point.y = event.clientY;
      return point.matrixTransform(svg.getScreenCTM().inverse()).x;
    }
    function toData(px) { return view[0] + (px - p0) / (p1 - p0) * (view[1] - view[0]); }
    function toPixel(x) { return p0 + (x - view[0]) / (view[1] - view[0]) * (p1 - p0); }
    function apply() {
      var k = (x1 - x0) / (view[1] - view[0]);
      var start = p0 + (view[0] - x0) / (x1 - x0) * (p1 - p0);
      plot.setAttribute("transform", "translate(" + (p0 - k * start) + " 0) scale(" + k + " 1)");
      while (ticks.firstChild) ticks.removeChild(ticks.firstChild);
      var values = niceTicks(view[0], view[1], 8);
      var labels = tickLabels(values);
      values.forEach(function (value, i) {
        var text = document.createElementNS(NS, "text");
        text.setAttribute("class", "tick");
        text.setAttribute("x", toPixel(value));
        text.setAttribute("y", tickY);
        text.setAttribute("text-anchor", "middle");
        text.textContent = labels[i];
        ticks.appendChild(text);
      });
      svg.querySelectorAll("text.mark").forEach(function (mark) {
        var px = toPixel(+mark.dataset.x);
        mark.setAttribute("x", px + 3);
        mark.style.display = px < p0 || px > p1 ? "none" : "";
      });
    }
    svg.addEventListener("mousedown", function (event) {
      var x = svgX(event);
      if (x < p0 || x > p1) return;
      dragFrom = x;
      event.preventDefault();
    });
    svg.addEventListener("mousemove", function (event) {
      if (dragFrom === null) return;
      var x = Math.min(Math.max(svgX(event), p0), p1);
      band.setAttribute("x", Math.min(x, dragFrom));
      band.setAttribute("width", Math.abs(x - dragFrom));
      band.style.display = "";
    });
    svg.addEventListener("mouseup", function (event) {
      if (dragFrom === null) return;
      var x = Math.min(Math.max(svgX(event), p0), p1);
      if (Math.abs(x - dragFrom) > 4) {
        view = [toData(Math.min(x, dragFrom)), toData(Math.max(x, dragFrom))];
        apply();
      }
      dragFrom = null;
      band.style.display = "none";
    });
    svg.addEventListener("dblclick", function () {
      view = [x0, x1];
      apply();
    });
  }

  document.querySelectorAll("svg.chart").forEach(zoomable);
  document.body.setAttribute("data-ready", String(document.querySelectorAll("svg.chart").length));
})();
