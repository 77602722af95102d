// On a phone the admin's result lists are shown as cards (static/css/admin.css); each cell gets
// its column's name in data-label, which the stylesheet prints before the value.
document.addEventListener('DOMContentLoaded', () => {
  document.querySelectorAll('#result_list').forEach((table) => {
    const names = [...table.querySelectorAll('thead th')].map((th) => th.textContent.trim());
    table.querySelectorAll('tbody tr').forEach((row) => {
      [...row.children].forEach((cell, i) => {
        if (names[i]) cell.dataset.label = names[i];
      });
    });
  });
});
