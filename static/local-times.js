// Times are written in UTC by the server (<time datetime="...Z" data-local>); show
// each in the reader's own time zone, with the UTC kept beside it.
document.querySelectorAll("time[data-local]").forEach((element) => {
  const moment = new Date(element.getAttribute("datetime"));
  if (Number.isNaN(moment.getTime())) return;
  const local = moment.toLocaleString(undefined, {
    weekday: "short", year: "numeric", month: "short", day: "numeric",
    hour: "2-digit", minute: "2-digit", timeZoneName: "short",
  });
  element.title = element.textContent;
  element.textContent = `${local} (${element.textContent})`;
});
